# S35 (s25): escaping of space, tab and backslash in mountinfo (the newline
# case of s25 cannot be written in this one-command-per-line language).
# Paths are double-quoted; inside them only $B is special.
mkdir -p "$B/sp ace" "$B/ta	b" "$B/back\slash" "$B/hash#pct%"
mount -t tmpfs "SRC WITH SPACE" "$B/sp ace"
mount -t tmpfs T "$B/ta	b"
mount -t tmpfs "S\x" "$B/back\slash"
mount -t tmpfs H "$B/hash#pct%"
mkdir -p "$B/sp ace/d i r"
mount --bind "$B/sp ace/d i r" "$B/hash#pct%"
