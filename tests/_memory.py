"""What the machine's memory settings allow a test to try."""


def overcommit_always():
    """True where Linux grants any allocation (``vm.overcommit_memory=1``): a huge result is
    then allocated, and touching it would summon the OOM killer."""
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            return f.read().strip() == "1"
    except OSError:
        return False
