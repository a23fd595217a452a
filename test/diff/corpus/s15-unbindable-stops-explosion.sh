# S15 (s14): with root/tmp bound onto itself and made unbindable, each
# rbind of the rshared root into tmp adds exactly one mount.
mkdir -p $B/root/tmp
mount -t tmpfs ROOT $B/root
mkdir -p $B/root/tmp $B/root/usr
mount --bind $B/root/tmp $B/root/tmp
mount --make-rshared $B/root
mount --make-unbindable $B/root/tmp
mkdir -p $B/root/tmp/m1
mount --rbind $B/root $B/root/tmp/m1
mkdir -p $B/root/tmp/m2
mount --rbind $B/root $B/root/tmp/m2
mkdir -p $B/root/tmp/m3
mount --rbind $B/root $B/root/tmp/m3
