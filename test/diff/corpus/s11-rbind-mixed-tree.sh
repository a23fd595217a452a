# S11 (s10): rbind of a tree with private, shared, slave and unbindable
# submounts, into a private and into a shared dest; the unbindable subtree
# is pruned, and refused as a bind/rbind source (EINVAL).
mkdir -p $B/src $B/dst $B/pdst $B/other
mount -t tmpfs SRC $B/src
mkdir -p $B/src/priv $B/src/sh $B/src/sl $B/src/ub
mount -t tmpfs PRIV $B/src/priv
mount -t tmpfs SH $B/src/sh
mount --make-shared $B/src/sh
mount -t tmpfs O $B/other
mount --make-shared $B/other
mount --bind $B/other $B/src/sl
mount --make-slave $B/src/sl
mount -t tmpfs UB $B/src/ub
mkdir -p $B/src/ub/deep
mount -t tmpfs DEEP $B/src/ub/deep
mount --make-unbindable $B/src/ub
mount --rbind $B/src $B/pdst
mount -t tmpfs D $B/dst
mount --make-shared $B/dst
mkdir -p $B/dst/t $B/dp
mount --bind $B/dst $B/dp
mount --rbind $B/src $B/dst/t
mount --bind $B/src/ub $B/other
mount --rbind $B/src/ub $B/other
