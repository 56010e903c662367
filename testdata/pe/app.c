/*
 * A tiny freestanding Windows console program: the fixture whose PE image and PDB the
 * identity and symbol tests read. No C runtime: the entry point is main_entry.
 *
 * The functions differ in size and call one another; each is kept out of line so that
 * it has its own procedure symbol in the PDB. mix_round is static, so it has a procedure
 * symbol (S_LPROC32) but no public symbol.
 *
 * spin_pause is written in assembly, so it has a public symbol (S_PUB32, without a size)
 * but no procedure symbol. It sits in section .text$z, which the linker places after all
 * of .text: it is the last function of the image's .text section.
 */

#define NOINLINE __attribute__((noinline))

__asm__(".section .text$z,\"xr\"\n"
        ".def spin_pause\n.scl 2\n.type 32\n.endef\n" /* external, type "function" */
        ".globl spin_pause\n"
        ".p2align 4\n"
        "spin_pause:\n"
        "    pause\n"
        "    retq\n"
        ".text\n");

void spin_pause(void);

static NOINLINE unsigned mix_round(unsigned h, unsigned char c)
{
    h ^= c;
    h *= 16777619u;
    return h ^ (h >> 13);
}

NOINLINE unsigned hash_bytes(const unsigned char *p, unsigned n)
{
    unsigned h = 2166136261u;
    for (unsigned i = 0; i < n; i++)
        h = mix_round(h, p[i]);
    return h;
}

NOINLINE int parse_token(const char *s, unsigned *value)
{
    unsigned v = 0;
    int n = 0;
    while (s[n] >= '0' && s[n] <= '9') {
        v = v * 10 + (unsigned)(s[n] - '0');
        n++;
    }
    if (s[n] == 'x' || s[n] == 'X') {
        v = hash_bytes((const unsigned char *)s, (unsigned)n);
        n++;
    }
    *value = v;
    return n;
}

NOINLINE unsigned compute_checksum(const char *text)
{
    unsigned sum = 0;
    unsigned value;
    int used;
    while (*text) {
        used = parse_token(text, &value);
        if (used == 0) {
            sum = (sum << 5) ^ (sum >> 27) ^ (unsigned char)*text;
            text++;
            continue;
        }
        sum += value;
        sum = mix_round(sum, (unsigned char)used);
        text += used;
    }
    return sum ^ hash_bytes((const unsigned char *)&sum, sizeof sum);
}

int main_entry(void)
{
    static const char input[] = "12 34x 56 chk 789";
    spin_pause();
    return (int)(compute_checksum(input) & 0x7F);
}
