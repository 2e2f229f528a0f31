# Raw TCP ping-pong over 127.0.0.1, the same-run baseline of the latency rows: N round trips of SIZE
# bytes each way on one connection (TCP_NODELAY), after 200 unmeasured ones. Prints avg, p50, p99 and max
# in us.
#   python3 tcp_pingpong.py SIZE N
import socket, sys, threading, time
size = int(sys.argv[1]); n = int(sys.argv[2])
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1); port = srv.getsockname()[1]
def echo():
    c, _ = srv.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = bytearray(size)
    while True:
        got = 0
        while got < size:
            k = c.recv_into(memoryview(buf)[got:])
            if k == 0: return
            got += k
        c.sendall(buf)
threading.Thread(target=echo, daemon=True).start()
s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
msg = b"x" * size; buf = bytearray(size); lat = []
for i in range(n + 200):
    t = time.perf_counter(); s.sendall(msg); got = 0
    while got < size:
        got += s.recv_into(memoryview(buf)[got:])
    if i >= 200: lat.append((time.perf_counter() - t) * 1e6)
lat.sort()
print("raw-tcp-pingpong size=%d n=%d avg=%.1f p50=%.1f p99=%.1f us max=%.1f us" % (size, n, sum(lat)/n, lat[n//2], lat[int(n*0.99)], lat[-1]))
