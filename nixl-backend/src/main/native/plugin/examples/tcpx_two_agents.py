"""Two NIXL agents in one Python process moving host memory through the TCPX backend.

A WRITE with a notification and a READ back; every byte is checked. Needs NIXL's Python package
(pip's `nixl`, or a source build's `nixl_cu12` / `nixl_cu13`) and numpy, and the TCPX plugin
installed with `./tcpx4j nixl install` (docs/NIXL.md). Exits 0 when every check passed.
"""
import sys
import time

try:  # the `nixl` meta package (pip install nixl, or a source build with uv)
    from nixl._api import nixl_agent, nixl_agent_config
except ImportError:
    try:  # a source build installs only the CUDA-suffixed package
        from nixl_cu13._api import nixl_agent, nixl_agent_config
    except ImportError:
        from nixl_cu12._api import nixl_agent, nixl_agent_config
import numpy as np

failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failures += 0 if ok else 1


def wait_for(predicate, seconds=20.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


cfg = nixl_agent_config(backends=["TCPX"])
target = nixl_agent("decode-0", cfg)
initiator = nixl_agent("prefill-0", cfg)
plugins = initiator.get_plugin_list()
print("     plugins NIXL found:", ", ".join(sorted(plugins)))
check("TCPX" in plugins, "TCPX plugin found")

n = (1 << 20) + 4097
rng = np.random.default_rng(7)
dst = np.zeros(n, dtype=np.uint8)
src = rng.integers(0, 256, n, dtype=np.uint8)
back = np.zeros(n, dtype=np.uint8)
# host memory as (address, length, device id, extra info) tuples
target.register_memory([(dst.ctypes.data, n, 0, "")], "DRAM", backends=["TCPX"])
initiator.register_memory([(src.ctypes.data, n, 0, ""), (back.ctypes.data, n, 0, "")], "DRAM", backends=["TCPX"])

# exchange metadata out of band (here: in-process)
initiator.add_remote_agent(target.get_agent_metadata())
target.add_remote_agent(initiator.get_agent_metadata())

# WRITE prefill-0 -> decode-0; the notification means the data has landed
xfer = initiator.initialize_xfer("WRITE",
                                 initiator.get_xfer_descs([(src.ctypes.data, n, 0)], "DRAM"),
                                 target.get_xfer_descs([(dst.ctypes.data, n, 0)], "DRAM"),
                                 "decode-0", b"block-7")
check(initiator.transfer(xfer) in ("PROC", "DONE"), "WRITE posted")
check(wait_for(lambda: target.check_remote_xfer_done("prefill-0", b"block-7")), "notification 'block-7' at decode-0")
check(bool((dst == src).all()), "WRITE: every byte landed at decode-0")
check(wait_for(lambda: initiator.check_xfer_state(xfer) == "DONE"), "WRITE completes at prefill-0")
initiator.release_xfer_handle(xfer)

# READ decode-0 -> prefill-0
xfer = initiator.initialize_xfer("READ",
                                 initiator.get_xfer_descs([(back.ctypes.data, n, 0)], "DRAM"),
                                 target.get_xfer_descs([(dst.ctypes.data, n, 0)], "DRAM"),
                                 "decode-0", b"read-done")
check(initiator.transfer(xfer) in ("PROC", "DONE"), "READ posted")
check(wait_for(lambda: initiator.check_xfer_state(xfer) == "DONE"), "READ completes at prefill-0")
check(bool((back == src).all()), "READ: every byte landed at prefill-0")
check(wait_for(lambda: target.check_remote_xfer_done("prefill-0", b"read-done")), "notification 'read-done' at decode-0")
initiator.release_xfer_handle(xfer)

initiator.remove_remote_agent("decode-0")
target.remove_remote_agent("prefill-0")
print(f"{failures} failed")
sys.exit(0 if failures == 0 else 1)
