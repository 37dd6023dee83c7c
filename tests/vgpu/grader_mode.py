"""grader_mode.py DEVICE PROGRAM PTX STATS — the grader's way to run a program on the virtual
GPU (cuda/vgpu/README.md): the grader starts vgpu-device itself, with the PTX and the stats
path in the device's environment only, and hands the program one end of a socket (VGPU_FD).
The program's environment names neither the PTX nor the stats file. Exits with the program's
status; the device's stats land in STATS."""
import os
import socket
import subprocess
import sys

device, program, ptx, stats = sys.argv[1:5]
host_end, dev_end = socket.socketpair()
dev_env = {"VGPU_PTX": ptx, "VGPU_STATS": stats, "PATH": os.environ.get("PATH", "")}
dev = subprocess.Popen([device, str(dev_end.fileno())], pass_fds=[dev_end.fileno()], env=dev_env)
dev_end.close()
prog_env = {k: v for k, v in os.environ.items() if not k.startswith("VGPU_")}
prog_env["VGPU_FD"] = str(host_end.fileno())
rc = subprocess.run([program], pass_fds=[host_end.fileno()], env=prog_env).returncode
host_end.close()  # the device sees the end of the bus, writes its totals and exits
dev.wait(timeout=60)
sys.exit(rc)
