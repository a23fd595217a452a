# S14 (s13): a shared root rbound repeatedly under itself: 2, 6, 42, 1806
# mounts, then the 5th rbind fails with ENOSPC (fs.mount-max = 100000) and
# changes nothing.
mkdir -p $B/root
mount -t tmpfs ROOT $B/root
mount --make-shared $B/root
mkdir -p $B/root/tmp/m1
mount --rbind $B/root $B/root/tmp/m1
mkdir -p $B/root/tmp/m2
mount --rbind $B/root $B/root/tmp/m2
mkdir -p $B/root/tmp/m3
mount --rbind $B/root $B/root/tmp/m3
mkdir -p $B/root/tmp/m4
mount --rbind $B/root $B/root/tmp/m4
mkdir -p $B/root/tmp/m5
mount --rbind $B/root $B/root/tmp/m5
