# S19 (s18): the copy for a receiver that already has LOCAL at x is tucked
# under LOCAL; unmounting the master's mount puts LOCAL back on s. The same
# with an overmount TOP created after propagation.
mkdir -p $B/m $B/s
mount -t tmpfs M $B/m
mount --make-shared $B/m
mount --bind $B/m $B/s
mount --make-slave $B/s
mkdir -p $B/m/x
mount -t tmpfs LOCAL $B/s/x
mount -t tmpfs MX $B/m/x
umount $B/m/x
mount -t tmpfs MX2 $B/m/x
umount $B/s/x
mount -t tmpfs TOP $B/s/x
umount $B/m/x
