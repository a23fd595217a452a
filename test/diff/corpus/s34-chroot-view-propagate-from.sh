# S34 (s24): what a chrooted process sees. From B/jail (a mount root) JAIL
# is "/" and outside mounts are hidden; from B/jail/dir (a plain directory)
# only /inner is listed; the jail's tmp/etc shows propagate_from.
# view: $B/jail
# view: $B/jail/dir
mkdir -p $B/jail $B/outside
mount -t tmpfs OUT $B/outside
mount -t tmpfs JAIL $B/jail
mkdir -p $B/jail/sub $B/jail/dir $B/jail/tmp/etc $B/jail/etc
mount -t tmpfs SUB $B/jail/sub
mkdir -p $B/jail/dir/inner
mount -t tmpfs INNER $B/jail/dir/inner
mount --make-shared $B/jail
mkdir -p $B/outside/etc
mount --bind $B/jail/etc $B/outside/etc
mount --make-slave $B/outside/etc
mount --make-shared $B/outside/etc
mount --bind $B/outside/etc $B/jail/tmp/etc
mount --make-slave $B/jail/tmp/etc
