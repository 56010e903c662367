/*
 * A freestanding Windows console program built with -O2: the fixture of the LBR views.
 * Loops, branches that go one way far more often than the other, calls, a tail call and
 * code inlined into its callers; no indirect branch, so that a walk over the disassembly
 * (the test kit's) can follow every path. No C runtime: the entry point is main_entry.
 */

#define NOINLINE __attribute__((noinline))

static inline unsigned rotate(unsigned x, unsigned by)
{
    return (x << (by & 31)) | (x >> ((32 - by) & 31));
}

NOINLINE unsigned scramble(unsigned x, unsigned rounds)
{
    for (unsigned i = 0; i < rounds; i++)
        x = rotate(x * 2654435761u, i + 7) ^ i;
    return x;
}

NOINLINE unsigned rare_path(unsigned x)
{
    unsigned h = x;
    for (unsigned i = 0; i < 3; i++)
        h = scramble(h + i, i + 2);
    return h;
}

NOINLINE unsigned classify(unsigned x)
{
    if ((x & 15) == 0)
        return rare_path(x);
    if (x & 1)
        return x * 3 + 1;
    return x >> 1;
}

NOINLINE unsigned sum_table(const unsigned *t, unsigned n)
{
    unsigned s = 0;
    for (unsigned i = 0; i < n; i++) {
        if (t[i] > 1000)
            s += rotate(t[i], 3);
        else
            s += t[i];
    }
    return s;
}

/* Ends in a call the compiler makes a jump: a tail call. */
NOINLINE unsigned finish(unsigned x)
{
    return scramble(x ^ 0x5A5A5A5Au, (x & 3) + 1);
}

NOINLINE unsigned step(unsigned x, const unsigned *t)
{
    x = classify(x);
    x += sum_table(t, 8);
    return finish(x);
}

static const unsigned table[8] = {3, 1400, 15, 9, 2000, 7, 11, 5000};

int main_entry(void)
{
    unsigned x = 12345;
    for (unsigned round = 0; round < 100; round++)
        x = step(x + round, table);
    return (int)(x & 0x7F);
}
