/* How fast this machine adds to random cache lines of a table, by table size: the memory
 * system a summary's counting tables live in. Without prefetching, each update waits for its
 * line; with it, the line of the update AHEAD updates later is asked for first, as
 * src/engine/counts.rs does.
 *
 *   cc -O2 -o target/cache-probe scripts/cache-probe.c && target/cache-probe [MIB]
 *
 * Prints ns per update for tables of 2 to 64 MiB, or of MIB MiB alone (scripts/bench.py asks
 * for the size of a summary's tables). Where the figure jumps is the part of the
 * last-level cache this process gets; past it, every update costs a trip to memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UPDATES 20000000

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    size_t only = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
    uint32_t *lines = malloc(UPDATES * sizeof *lines);
    if (!lines) return 1;
    printf("table     no prefetch   16 ahead   32 ahead\n");
    for (size_t mib = only ? only : 2; only ? mib == only : mib <= 64; mib *= 2) {
        size_t n = mib << 20, count = n / 64;
        uint32_t *table = aligned_alloc(64, n);
        if (!table) return 1;
        for (size_t i = 0; i < n / 4; i++) table[i] = (uint32_t)i;
        uint64_t x = 88172645463325252ull;
        for (size_t i = 0; i < UPDATES; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            lines[i] = (uint32_t)((x >> 20) % count);
        }
        printf("%3zu MiB", mib);
        size_t aheads[] = {0, 16, 32};
        for (int a = 0; a < 3; a++) {
            size_t ahead = aheads[a];
            double start = now();
            for (size_t i = 0; i < UPDATES; i++) {
                if (ahead && i + ahead < UPDATES)
                    __builtin_prefetch(&table[lines[i + ahead] * 16], 1, 3);
                table[lines[i] * 16] += 1;
            }
            printf("   %8.1f ns", (now() - start) * 1e9 / UPDATES);
        }
        printf("\n");
        free(table);
    }
    free(lines);
    return 0;
}
