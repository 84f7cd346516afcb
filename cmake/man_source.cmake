# cmake/man_source.cmake - the markdown the man page is made from: HEAD (NAME, SYNOPSIS)
# then BODY (docs/CLI.md) with its title line dropped and links to other docs made plain
# (a man page cannot follow them). cmake -DHEAD= -DBODY= -DOUT= -P man_source.cmake
file(READ ${HEAD} head)
file(READ ${BODY} body)
string(REGEX REPLACE "^# [^\n]*\n" "" body "${body}")
# [text](FILE.md) -> text (docs/FILE.md)
string(REGEX REPLACE "\\[([^]]*)\\]\\(([A-Za-z_]+\\.md)\\)" "\\1 (docs/\\2)" body "${body}")
# A table cell's escaped pipe (`a\|b`) would show its backslash: "a/b" reads the same.
string(REPLACE "\\|" "/" body "${body}")
file(WRITE ${OUT} "${head}\n# DESCRIPTION\n${body}")
