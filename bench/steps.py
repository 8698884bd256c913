"""A process's steps timed by its own CPU (getrusage: what a matrix row's CPU per I/O counts)
and by the wall clock, for the bench scripts that take a kernel mechanism apart step by step
(trace_instance.py, perf_trace_cost.py, bpf_cost.py). The kernel's work in other threads is
not the process's and is not counted."""
import resource
import statistics as st
import time


def cpu_ms():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1000


class Steps:
    def __init__(self):
        self.taken = {}

    def step(self, name, f):
        """Runs `f`, its CPU and wall time kept under `name`; what `f` returned."""
        c, t = cpu_ms(), time.perf_counter()
        r = f()
        self.taken.setdefault(name, []).append((cpu_ms() - c, (time.perf_counter() - t) * 1000))
        return r

    def table(self, rounds, note, counted=lambda name: True):
        """Prints each step's medians over `rounds` (one taken several times a round: each
        time's, and how many times); returns a round's CPU over the steps `counted`."""
        total = 0.0
        print(f"{'step':22} {'cpu ms':>8} {'wall ms':>8}  ({note})")
        for name, v in self.taken.items():
            per = len(v) // rounds
            c, w = st.median(x[0] for x in v), st.median(x[1] for x in v)
            if counted(name):
                total += c * max(per, 1)
            print(f"{name:22} {c:8.2f} {w:8.2f}" + (f"  x{per}" if per > 1 else ""))
        return total
