/*
 * The fixture of C++ names of inlined functions: a freestanding Windows console program
 * built with -O2, whose helpers are a function in a namespace, one in a nested namespace,
 * a member function of a struct and one of a union, all inlined into run. A function ID
 * names its namespace as its scope; a member function's ID names its class (a struct or a
 * union in the type stream). run and main_entry are extern "C", so that their procedure
 * names are the names llvm-symbolizer gives them too. main_entry is in a file of its own,
 * members-entry.cpp, linked second: its procedure is in the PDB's second module.
 */

#define NOINLINE __attribute__((noinline))
#define ALWAYS __attribute__((always_inline))

namespace geo {
ALWAYS inline unsigned scale(unsigned x) { return x * 3u + 1u; }
namespace detail {
ALWAYS inline unsigned twist(unsigned x) { return (x << 7) | (x >> 25); }
}
}

struct Acc {
    unsigned h;
    ALWAYS void add(unsigned c) { h = (h ^ c) * 16777619u; }
};

union Bits {
    unsigned u;
    unsigned char b[4];
    ALWAYS unsigned low() const { return b[0]; }
};

extern "C" NOINLINE unsigned run(const unsigned char *p, unsigned n)
{
    Acc acc = {2166136261u};
    for (unsigned i = 0; i < n; i++) {
        Bits bits;
        bits.u = geo::detail::twist(geo::scale(p[i]));
        acc.add(bits.low());
    }
    return acc.h;
}
