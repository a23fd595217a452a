# semantics.md 3.2 step 6: a copy is tucked under a whole stack (LOCAL1
# with LOCAL2 on top, and a child of LOCAL2); the master's umount puts the
# stack back; a peer's own umount of the top of the stack is local.
mkdir -p $B/m $B/s
mount -t tmpfs M $B/m
mount --make-shared $B/m
mount --bind $B/m $B/s
mount --make-slave $B/s
mkdir -p $B/m/x
mount -t tmpfs LOCAL1 $B/s/x
mount -t tmpfs LOCAL2 $B/s/x
mkdir -p $B/s/x/c
mount -t tmpfs CHILD $B/s/x/c
mount -t tmpfs MX $B/m/x
umount $B/m/x
mount -t tmpfs MX2 $B/m/x
umount $B/s/x/c
umount $B/s/x
