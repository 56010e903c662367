/* The entry point of members.exe (see members.cpp), in a module of its own. */

extern "C" unsigned run(const unsigned char *p, unsigned n);

extern "C" int main_entry(void)
{
    static const unsigned char input[] = "members and namespaces";
    return (int)(run(input, sizeof input - 1) & 0x7f);
}
