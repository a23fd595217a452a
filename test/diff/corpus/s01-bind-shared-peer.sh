# S1 (semantics.md 11, s01): bind of a shared mount creates a peer;
# a mount on either peer propagates to the other.
mkdir -p $B/a $B/b
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/b
mkdir -p $B/a/x
mount -t tmpfs X $B/b/x
