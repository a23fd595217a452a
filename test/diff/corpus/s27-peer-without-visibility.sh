# S27 (s29): peer b (root /sub1) cannot see /other and gets nothing; the
# slave c can and gets a slave copy.
mkdir -p $B/a $B/b $B/c
mount -t tmpfs A $B/a
mount --make-shared $B/a
mkdir -p $B/a/sub1 $B/a/other
mount --bind $B/a/sub1 $B/b
mount --bind $B/a $B/c
mount --make-slave $B/c
mount -t tmpfs X $B/a/other
