# A slave moved onto a member of its own master group (random seed 20649):
# under the shared destination it gets a group of its own, and, being a
# slave of that group, receives a copy of itself.  The copy is a pure
# slave: the moved mount's new group is only invented while the copies
# are made, it is not yet shared (semantics.md 1.3, 6.2).
mkdir -p $B/a $B/p $B/s
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/p
mount --bind $B/a $B/s
mount --make-slave $B/s
mount --move $B/s $B/a
mount -t tmpfs X $B/a
