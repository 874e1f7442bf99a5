#!/usr/bin/env python3
"""A network link between two namespaces with a fault injector in the middle: what `tc netem`
does, in user space, for kernels built without sch_netem (this machine's and CI's:
CONFIG_NET_SCH_NETEM is not set). It creates TUN device HOST_DEV in namespace HOST_NS and
ROUTER_DEV in ROUTER_NS and copies every IP packet between them, each direction delayed by a fixed
time (order kept) and dropped with a probability. Commands on stdin, one a line:
  delay SECONDS    loss FRACTION (0..1; 1 = cut off)    exit
It prints "ready" once both devices exist, and per command "ok".
Usage: wire.py HOST_NS HOST_DEV ROUTER_NS ROUTER_DEV"""
import collections
import ctypes
import fcntl
import os
import random
import struct
import sys
import threading
import time

CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
libc = ctypes.CDLL(None, use_errno=True)


def setns(name):
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {name}")
    finally:
        os.close(fd)


def tun(ns, dev):
    setns(ns)
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", dev.encode(), IFF_TUN | IFF_NO_PI))
    return fd


class Direction:
    def __init__(self, src, dst, state):
        self.src, self.dst, self.state = src, dst, state
        self.queue = collections.deque()
        self.cv = threading.Condition()

    def read(self):
        while True:
            try:
                pkt = os.read(self.src, 65536)
            except OSError:
                time.sleep(0.01)  # the device is down: nothing to read
                continue
            delay, loss = self.state["delay"], self.state["loss"]
            if loss > 0 and random.random() < loss:
                continue
            with self.cv:
                self.queue.append((time.monotonic() + delay, pkt))
                self.cv.notify()

    def write(self):
        while True:
            with self.cv:
                while not self.queue:
                    self.cv.wait()
                due, pkt = self.queue[0]
                now = time.monotonic()
                if due > now:
                    self.cv.wait(due - now)
                    continue
                self.queue.popleft()
            try:
                os.write(self.dst, pkt)
            except OSError:
                pass  # the far device is down: the packet is lost, as on a cable


def main():
    host_ns, host_dev, router_ns, router_dev = sys.argv[1:5]
    a = tun(host_ns, host_dev)
    b = tun(router_ns, router_dev)
    state = {"delay": 0.0, "loss": 0.0}
    for d in (Direction(a, b, state), Direction(b, a, state)):
        threading.Thread(target=d.read, daemon=True).start()
        threading.Thread(target=d.write, daemon=True).start()
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "exit":
            break
        for key, value in zip(words[::2], words[1::2]):
            state[key] = float(value)
        print("ok", flush=True)


main()
