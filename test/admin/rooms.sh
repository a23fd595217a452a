#!/bin/sh
# rooms.sh [SRCDIR] - every #include "..." of daemon/ and shim/ held
# against the arrows of docs/design.md, "The broker's rooms": the table
# there, one line "    ROOM -> ROOM..." per room, is the one place the
# arrows are written.  A room is a folder: each of daemon/broker/ (broker.h
# itself is "broker"), daemon/engine ("engine"), daemon/tools ("tools"),
# shim and include.  "all" names every room of daemon/broker/.
#
# Prints an include that no arrow allows, an arrow that no include takes
# (the picture would lie), an arrow that names no room, and the rooms of
# a circle; exits 1 when it printed any, 0 when the house is as drawn.
src=${1:-.}
cd "$src" || exit 2
[ -f docs/design.md ] || { echo "rooms.sh: $src: no docs/design.md" >&2; exit 2; }
{
	awk '/^### The broker.s rooms/ { on = 1; next }
	     /^#/ { on = 0 }
	     on && /^    [a-z]+ +-> / { print "arrow", $0 }' docs/design.md
	find daemon include shim -name '*.h' | sed 's/^/header /'
	find daemon shim -name '*.[ch]' | sort | sed 's/^/file /'
	grep -H '^#[ 	]*include[ 	]*"' $(find daemon shim -name '*.[ch]' | sort) |
		sed 's/^\([^:]*\):#[ 	]*include[ 	]*"\([^"]*\)".*/include \1 \2/'
} | awk '
function room_of(path,   p) {
	split(path, p, "/")
	if (p[1] == "daemon" && p[2] == "broker")
		return p[4] == "" ? "broker" : p[3]
	if (p[1] == "daemon")
		return p[2]
	return p[1]
}
function dir_of(path) {
	sub(/\/[^\/]*$/, "", path)
	return path
}
# The header an include names, as the compiler finds it: the including
# file'"'"'s folder first, then -I daemon/broker, include, daemon/engine.
function target(file, name,   d) {
	d = dir_of(file) "/" name
	if (d in header) return d
	if (("daemon/broker/" name) in header) return "daemon/broker/" name
	if (("include/" name) in header) return "include/" name
	if (("daemon/engine/" name) in header) return "daemon/engine/" name
	return ""
}
function allowed(from, to) {
	if (from == to) return 1
	if ((from, to) in arrow) { used[from, to] = 1; return 1 }
	if (from in broker_room && ("all", to) in arrow) return 1
	return 0
}
$1 == "arrow" {
	from = $2
	for (i = 4; i <= NF; i++) {
		arrow[from, $i] = 1
		named[from] = named[$i] = 1
		out[from] = out[from] " " $i
	}
	next
}
$1 == "header" { header[$2] = 1; exists[room_of($2)] = 1; next }
$1 == "file" {
	r = room_of($2)
	exists[r] = 1
	if ($2 ~ /^daemon\/broker\/[^\/]+\//) broker_room[r] = 1
	next
}
$1 == "include" {
	t = target($2, $3)
	if (t == "") {
		print $2 ": includes \"" $3 "\", which is no header of the tree"
		bad++
	} else if (!allowed(room_of($2), room_of(t))) {
		print $2 ": includes " t ": no arrow " room_of($2) " -> " room_of(t)
		bad++
	}
}
function visit(r,   n, i, v) {
	if (state[r] == 1) { print "a circle of arrows through " r; bad++; return }
	if (state[r] == 2) return
	state[r] = 1
	n = split(out[r], v, " ")
	for (i = 1; i <= n; i++)
		visit(v[i])
	state[r] = 2
}
END {
	exists["all"] = 1
	for (r in named)
		if (!(r in exists)) { print "an arrow names " r ", which is no room"; bad++ }
	for (k in arrow) {
		split(k, p, SUBSEP)
		if (p[1] != "all" && !(k in used)) {
			print "the arrow " p[1] " -> " p[2] " is drawn, but no file of " p[1] " includes from " p[2]
			bad++
		}
	}
	for (r in out)
		visit(r)
	exit bad > 0
}'
