# semantics.md 2.2/2.3: what happens to M's slaves when M leaves its group
# by make-slave/make-private/make-unbindable: peers left (unchanged),
# sole member with a master (slaves follow to the master's group), sole
# member without master (pure slaves private, shared+slaves plain shared).
mkdir -p $B/z $B/a $B/ap $B/as $B/m $B/ms $B/n $B/ns $B/nss $B/u $B/us
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount -t tmpfs A $B/a
mount --make-shared $B/a
mount --bind $B/a $B/ap
mount --bind $B/a $B/as
mount --make-slave $B/as
mount --bind $B/z $B/m
mount --make-slave $B/m
mount --make-shared $B/m
mount --bind $B/m $B/ms
mount --make-slave $B/ms
mount -t tmpfs N $B/n
mount --make-shared $B/n
mount --bind $B/n $B/ns
mount --make-slave $B/ns
mount --bind $B/n $B/nss
mount --make-slave $B/nss
mount --make-shared $B/nss
mount -t tmpfs U $B/u
mount --make-shared $B/u
mount --bind $B/u $B/us
mount --make-slave $B/us
mount --make-private $B/a
mount --make-unbindable $B/m
mount --make-slave $B/n
mount --make-unbindable $B/u
mkdir -p $B/ap/x $B/z/x
mount -t tmpfs AX $B/ap/x
mount -t tmpfs ZX $B/z/x
