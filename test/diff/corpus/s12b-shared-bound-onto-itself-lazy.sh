# S12 (s11b): lazy umount of the top clone takes its child and the hidden
# copy on the original; then a private tree rbound into its own
# subdirectory is a plain copy, no recursion.
mkdir -p $B/a
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/a
mkdir -p $B/a/x
mount -t tmpfs X $B/a/x
umount -l $B/a
mkdir -p $B/p
mount -t tmpfs P $B/p
mkdir -p $B/p/q $B/p/in
mount -t tmpfs Q $B/p/q
mount --rbind $B/p $B/p/in
