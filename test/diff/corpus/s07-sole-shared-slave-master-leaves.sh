# S7 (s07): a sole shared+slave master leaves its group (make-slave M,
# make-private M2): its slaves move up to the grand-master Z's group.
mkdir -p $B/z $B/m $B/s $B/m2 $B/s2
mount -t tmpfs Z $B/z
mount --make-shared $B/z
mount --bind $B/z $B/m
mount --make-slave $B/m
mount --make-shared $B/m
mount --bind $B/m $B/s
mount --make-slave $B/s
mount --bind $B/z $B/m2
mount --make-slave $B/m2
mount --make-shared $B/m2
mount --bind $B/m2 $B/s2
mount --make-slave $B/s2
mount --make-slave $B/m
mount --make-private $B/m2
mkdir -p $B/z/q
mount -t tmpfs Q $B/z/q
