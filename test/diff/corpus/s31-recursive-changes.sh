# S31 (s28): make-rshared gives each mount its own group; make-rslave of an
# rbind copy slaves each copy to its original; make-rprivate of T also
# strips U's masters; make-runbindable hits all; make-shared only the top.
mkdir -p $B/t
mount -t tmpfs T $B/t
mkdir -p $B/t/a $B/t/b
mount -t tmpfs TA $B/t/a
mount -t tmpfs TB $B/t/b
mkdir -p $B/t/a/c
mount -t tmpfs TAC $B/t/a/c
mount --make-rshared $B/t
mkdir -p $B/u
mount --rbind $B/t $B/u
mount --make-rslave $B/u
mount --make-rprivate $B/t
mount --make-runbindable $B/t
mount --make-shared $B/t
