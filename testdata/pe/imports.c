/* imports.exe: a console program that calls core.dll's exports through its import table,
 * the fixture of callees that are imports (spddump /cg /image). */

#define IMPORT __declspec(dllimport)

IMPORT int core_add(int a, int b);
IMPORT int core_scale(const int *values, int n, int factor);
IMPORT unsigned core_version(void);

int main_entry(void)
{
    static const int values[4] = {1, 2, 3, 4};
    return core_add(core_scale(values, 4, 3), (int)core_version());
}
