/*
 * Wine work-around for scripts/windows-check.sh; test-only, never shipped with sptdump.
 *
 * Rust's standard library (1.78 and later) imports ProcessPrng from bcryptprimitives.dll and
 * calls it at start-up. Wine 8, the version Debian 12 ships, has no bcryptprimitives.dll, so
 * every Rust program fails to start there ("Library bcryptprimitives.dll ... not found").
 * windows-check.sh builds this file with mingw into a bcryptprimitives.dll placed next to the
 * copy of sptdump.exe it runs under Wine. Real Windows (10 and later) has the DLL, and newer
 * Wine versions do too; the script then leaves this shim out.
 *
 * ProcessPrng fills the buffer with random bytes; here advapi32's RtlGenRandom
 * (SystemFunction036), which every Wine has, does the work. RtlGenRandom takes a 32-bit
 * length, so large requests go in pieces.
 */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
