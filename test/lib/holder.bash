# Bats/bash helper: the holders brokers leave (sharebrokerd's holder.c).
# A broker that stops or dies while some mount it manages is covered
# leaves a holder process ("sharebrokerhold") keeping it for the next
# broker; a test that stops its broker for good ends it too, or the
# process (and the test's mount namespace with it) would outlive the test.

# Ends the holder every DIR/**/holder.pid names, if that pid still is a
# holder (pid reuse), and waits until it is gone.
end_holders() {
	local f pid comm i
	for f in $(find "$@" -name holder.pid 2>/dev/null); do
		read -r pid _ <"$f" 2>/dev/null || continue
		read -r comm <"/proc/$pid/comm" 2>/dev/null || continue
		[ "$comm" = sharebrokerhold ] || continue
		kill -KILL "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			read -r comm <"/proc/$pid/stat" 2>/dev/null || break
			[[ ${comm##*) } == Z* ]] && break
			sleep 0.05
		done
	done
	return 0
}
