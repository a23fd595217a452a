# issue 13: each call's own lookup rule, from a cwd a later mount covered
# (the cwd keeps its (mount, dentry): semantics.md 5.1, 3.2, 4.1, 6.1).
# umount2's last component goes to the top of the stack there
# (LOOKUP_MOUNTPOINT): ".", "..", a trailing "/."; util-linux's umount
# makes "." absolute, which lands on the top too.
mkdir -p $B/a/in $B/b $B/c $B/d/sub $B/e
cd $B/a
mount -t tmpfs A1 $B/a
mount -t tmpfs A2 $B/a
umount2 .
umount2 -l ./.
umount2 .
mount -t tmpfs A3 $B/a
umount .
# a new mount on ".", a bind onto "." and onto "./.": on top of the stack
mount -t tmpfs A4 $B/a
mount -c -t tmpfs N1 .
mount -c --bind $B/b ./.
# a bind's source ".": the directory beneath, which has "in"
mount -c --bind . $B/c
umount $B/a
umount $B/a
umount $B/a
umount $B/c
# "..": out of the cwd, into the top of the parent's stack
cd $B/d/sub
mount -t tmpfs D1 $B/d
mkdir -p $B/d/x
mount -c -t tmpfs X1 ../x
umount2 ../x
umount2 ..
umount2 ..
# a move's source "." is the mount the cwd is in, beneath its cover
mount -t tmpfs E1 $B/e
cd $B/e
mount -t tmpfs E2 $B/e
mount -c --move . $B/b
umount2 .
cd $B
umount $B/b
umount $B/b
