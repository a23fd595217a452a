# S25 (s32, quiz A): a peer moved under its own peer receives a copy of
# itself: mnt, mnt/1, mnt/1/1 in one group.
mkdir -p $B/mnt $B/tmp
mount -t tmpfs MNT $B/mnt
mkdir -p $B/mnt/1
mount --bind $B/mnt $B/mnt
mount --make-shared $B/mnt
mount --bind $B/mnt $B/tmp
mount --move $B/tmp $B/mnt/1
