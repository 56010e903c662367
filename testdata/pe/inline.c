/*
 * The fixture of source lines and inline frames: a freestanding Windows console program
 * built with -O2, whose helpers the compiler inlines two deep. No C runtime: the entry
 * point is main_entry.
 *
 *   main_entry
 *     checksum                  out of line
 *       step      [inlined]     calls digest, which stays out of line: the return
 *                               address of that call lies in inlined code
 *       digest                  out of line
 *         mix     [inlined]
 *           rotate [inlined]    two deep
 */

#define NOINLINE __attribute__((noinline))
#define INLINE static inline __attribute__((always_inline))

INLINE unsigned rotate(unsigned x, unsigned r)
{
    return (x << r) | (x >> (32u - r));
}

INLINE unsigned mix(unsigned h, unsigned char c)
{
    h ^= c;
    h *= 16777619u;
    return rotate(h, 13u);
}

NOINLINE unsigned digest(const unsigned char *p, unsigned n)
{
    unsigned h = 2166136261u;
    for (unsigned i = 0; i < n; i++)
        h = mix(h, p[i]);
    return h;
}

INLINE unsigned step(const char *s, unsigned n, unsigned sum)
{
    unsigned d = digest((const unsigned char *)s, n);
    return (sum << 5) ^ (sum >> 27) ^ d;
}

NOINLINE unsigned checksum(const char *text, unsigned len)
{
    unsigned sum = 0;
    for (unsigned i = 0; i + 4 <= len; i += 4)
        sum = step(text + i, 4, sum);
    return sum;
}

int main_entry(void)
{
    static const char input[] = "spgo samples, inlined";
    return (int)(checksum(input, sizeof input - 1) & 0x7f);
}

/*
 * tally: mix inlined into a second function, after main_entry and called by nothing (the
 * /debug link keeps it). An inlined function is one key wherever it was inlined, shown at
 * the lowest start of the functions it was inlined into: here digest's, below tally's.
 */
NOINLINE unsigned tally(const unsigned char *p, unsigned n)
{
    unsigned h = 5381u;
    for (unsigned i = 0; i < n; i += 2)
        h = mix(h, p[i]);
    return h;
}
