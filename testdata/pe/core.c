/*
 * A tiny freestanding Windows DLL with a few exported functions: the fixture for matching
 * a library's identity. Built twice by build.sh: core.dll as it is, and v2/core.dll with
 * CORE_V2 defined, which changes the code of core_scale and core_version (so the PDB's
 * contents, and with them the GUID lld derives from them, differ).
 *
 * core_sum3 is written in assembly, so the compiler emits no procedure symbol (S_GPROC32)
 * for it: the PDB knows it only by its public symbol, which carries no size.
 */

__asm__(".text\n"
        ".def core_sum3\n.scl 2\n.type 32\n.endef\n" /* external, type "function" */
        ".globl core_sum3\n"
        ".p2align 4\n"
        "core_sum3:\n"
        "    leal (%rcx,%rdx), %eax\n"
        "    addl %r8d, %eax\n"
        "    retq\n"
        ".section .drectve,\"yn\"\n"
        ".ascii \" /EXPORT:core_sum3\"\n"
        ".text\n");

#define EXPORT __declspec(dllexport) __attribute__((noinline))

EXPORT int core_add(int a, int b)
{
    return a + b;
}

EXPORT int core_scale(const int *values, int n, int factor)
{
    int total = 0;
    for (int i = 0; i < n; i++)
#ifdef CORE_V2
        total += values[i] * factor + i;
#else
        total += values[i] * factor;
#endif
    return total;
}

EXPORT unsigned core_version(void)
{
#ifdef CORE_V2
    return 0x00020000u;
#else
    return 0x00010000u;
#endif
}
