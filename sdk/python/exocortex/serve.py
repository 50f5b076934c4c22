"""serve(): run a Plugin as a plugin process the Exocortex host starts, speaking
hashicorp/go-plugin's protocol (gRPC only) as a Go plugin built with the Go SDK does.

What go-plugin's host expects of the process, and what serve() does:

- the environment carries the magic cookie EXOCORTEX_PLUGIN; without it the program
  says it is a plugin and exits 1 (it was run by hand);
- the process serves gRPC on a Unix socket (in $PLUGIN_UNIX_SOCKET_DIR when set) and
  then prints one line on stdout, "1|1|unix|/path/to.sock|grpc|": go-plugin's core
  protocol version, the app protocol version (exocortex.v1), network, address and
  protocol. Nothing else may reach stdout before it; after it, sys.stdout is
  redirected to the host's log;
- on that socket, besides exocortex.v1.Plugin: grpc.health.v1.Health (the service
  "plugin" is SERVING; the host's Ping), plugin.GRPCController/Shutdown (the host's
  graceful stop: the process exits), plugin.GRPCStdio/StreamStdio (kept open, empty:
  logs go straight to stderr) and plugin.GRPCBroker/StartStream (the host announces
  its own services there; Call.host() dials them);
- logs are JSON lines on stderr in hclog's shape, at info level and above;
- on the host's graceful stop, the tasks still pending on the plugin's event loops
  (exocortex.aio: tasks hook calls started, DeferredTasks) are cancelled, and the
  log says which;
- the plugin exits within about PARENT_POLL_INTERVAL once its host dies (go-plugin
  does not stop a plugin whose host died without killing it), and ignores SIGINT (the
  host stops it; an operator's Ctrl+C is for the host).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import tempfile
import threading
from concurrent import futures
from typing import Callable, Dict, NoReturn, Optional, Tuple

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, empty_pb2, message_factory

from exocortex import aio
from exocortex.log import HostLogHandler, Logger, _StdoutToLog
from exocortex.server import PROTOCOL_VERSION, PluginService, new_server
from exocortex.spec import InvalidPlugin, Plugin
from exocortex.v1 import plugin_pb2_grpc

# The go-plugin handshake shared with the host (Go: protocol.Handshake()). The cookie is
# not a secret: it only stops a plugin from being run by hand as a command.
MAGIC_COOKIE_KEY = "EXOCORTEX_PLUGIN"
MAGIC_COOKIE_VALUE = "3f1c9a1e-exocortex-plugin-protocol"
# go-plugin's own protocol version, the first field of the handshake line.
CORE_PROTOCOL_VERSION = 1
# How often a serving plugin checks that the host that started it is alive.
PARENT_POLL_INTERVAL = 0.25
# Hook calls served at once; three more threads hold go-plugin's stdio and broker
# streams and the host's Dispatch stream (the host keeps one per plugin).
MAX_WORKERS = 16
# How long Call.host() waits for the host to announce its services.
BROKER_DIAL_TIMEOUT = 5.0


def _goplugin_messages() -> Dict[str, type]:
    """The messages of go-plugin's own services and of gRPC health checking, built
    from descriptors in a private pool (the wire contract only: field numbers and
    types)."""
    f = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="exocortex_sdk/goplugin.proto", package="exocortex_sdk.goplugin",
                                             syntax="proto3")

    def msg(name: str, *fields: Tuple[str, int, int, str]) -> None:
        m = fdp.message_type.add(name=name)
        for fname, number, ftype, type_name in fields:
            fd = m.field.add(name=fname, number=number, type=ftype, label=f.LABEL_OPTIONAL)
            if type_name:
                fd.type_name = type_name

    msg("HealthCheckRequest", ("service", 1, f.TYPE_STRING, ""))
    msg("HealthCheckResponse", ("status", 1, f.TYPE_INT32, ""))  # enum ServingStatus; SERVING = 1
    msg("StdioData", ("channel", 1, f.TYPE_INT32, ""), ("data", 2, f.TYPE_BYTES, ""))
    msg("Knock", ("knock", 1, f.TYPE_BOOL, ""), ("ack", 2, f.TYPE_BOOL, ""), ("error", 3, f.TYPE_STRING, ""))
    msg("ConnInfo", ("service_id", 1, f.TYPE_UINT32, ""), ("network", 2, f.TYPE_STRING, ""),
        ("address", 3, f.TYPE_STRING, ""), ("knock", 4, f.TYPE_MESSAGE, ".exocortex_sdk.goplugin.Knock"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    out = {}
    for name in ("HealthCheckRequest", "HealthCheckResponse", "StdioData", "ConnInfo"):
        d = pool.FindMessageTypeByName("exocortex_sdk.goplugin." + name)
        get = getattr(message_factory, "GetMessageClass", None)
        out[name] = get(d) if get else message_factory.MessageFactory(pool).GetPrototype(d)
    return out


class _Broker:
    """The plugin's end of go-plugin's broker: the host sends the address of each
    service it offers (ConnInfo) on the StartStream stream; dial() waits for one."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._conns: Dict[int, Tuple[str, str]] = {}

    def start_stream(self, request_iterator, context):
        for info in request_iterator:
            with self._cond:
                self._conns[info.service_id] = (info.network, info.address)
                self._cond.notify_all()
        return
        yield  # a stream that answers nothing

    def dial(self, service_id: int, timeout: float = BROKER_DIAL_TIMEOUT) -> grpc.Channel:
        with self._cond:
            if not self._cond.wait_for(lambda: service_id in self._conns, timeout):
                raise RuntimeError(f"the host announced no service on broker stream {service_id} "
                                   f"within {timeout:g}s")
            network, address = self._conns[service_id]
        if network != "unix":
            return grpc.insecure_channel(address)
        return grpc.insecure_channel("unix:" + address)


class _HostServices:
    """Call.host(): the host's services (exocortex.v1.Host), dialed on first use;
    memory() is the memory service (exocortex.v1.MemoryService) the host serves
    on the same connection."""

    def __init__(self, broker: _Broker) -> None:
        self._broker = broker
        self._lock = threading.Lock()
        self._stub = None
        self._memory = None

    def __call__(self):
        with self._lock:
            if self._stub is None:
                from exocortex.v1 import host_pb2, host_pb2_grpc, memory_pb2_grpc

                channel = self._broker.dial(host_pb2.HOST_BROKER_ID)
                self._stub = host_pb2_grpc.HostStub(channel)
                self._memory = memory_pb2_grpc.MemoryServiceStub(channel)
            return self._stub

    def memory(self):
        self()
        return self._memory


def _goplugin_handlers(stop: threading.Event, broker: _Broker) -> list:
    m = _goplugin_messages()
    req, resp = m["HealthCheckRequest"], m["HealthCheckResponse"]
    serving = {"", "plugin"}  # the whole server, and go-plugin's GRPCServiceName

    def check(request, context):
        if request.service not in serving:
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
        return resp(status=1)  # SERVING

    def shutdown(request, context):
        stop.set()
        return empty_pb2.Empty()

    def stream_stdio(request, context):
        # Logs go straight to stderr, which the host reads: there is nothing to
        # stream, but the host's stdio client expects the stream to exist.
        done = threading.Event()
        context.add_callback(done.set)
        while not done.wait(1.0) and not stop.is_set():
            pass
        return
        yield

    return [
        grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
            "Check": grpc.unary_unary_rpc_method_handler(
                check, request_deserializer=req.FromString, response_serializer=resp.SerializeToString),
        }),
        grpc.method_handlers_generic_handler("plugin.GRPCController", {
            "Shutdown": grpc.unary_unary_rpc_method_handler(
                shutdown, request_deserializer=empty_pb2.Empty.FromString,
                response_serializer=empty_pb2.Empty.SerializeToString),
        }),
        grpc.method_handlers_generic_handler("plugin.GRPCStdio", {
            "StreamStdio": grpc.unary_stream_rpc_method_handler(
                stream_stdio, request_deserializer=empty_pb2.Empty.FromString,
                response_serializer=m["StdioData"].SerializeToString),
        }),
        grpc.method_handlers_generic_handler("plugin.GRPCBroker", {
            "StartStream": grpc.stream_stream_rpc_method_handler(
                broker.start_stream, request_deserializer=m["ConnInfo"].FromString,
                response_serializer=m["ConnInfo"].SerializeToString),
        }),
    ]


def _socket_path() -> str:
    fd, path = tempfile.mkstemp(prefix="plugin", dir=os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or None)
    os.close(fd)
    os.remove(path)
    return path


def watch_parent(getppid: Callable[[], int], every: float, gone: Callable[[], None],
                 stop: Optional[threading.Event] = None, start: Optional[int] = None) -> None:
    """Call gone once when getppid's answer differs from start (by default its first
    answer), then return; return without calling it when stop is set. serve() takes
    start before its handshake: a host that dies right after it must still be seen."""
    if start is None:
        start = getppid()
    stop = stop or threading.Event()
    while not stop.wait(every):
        if getppid() != start:
            gone()
            return


def serve(plugin: Plugin) -> NoReturn:
    """Run plugin as a plugin process: validate it, then serve it to the host that
    started the process until the host stops it or dies. Call it from the main module
    and nothing else; print nothing before it (the handshake line goes to stdout).

    When the plugin is not valid, serve() writes the problems to stderr and exits 1,
    so an author who runs `python3 main.py` sees them; run by hand otherwise, the
    program says it is a plugin and exits 1."""
    parent = os.getppid()  # before the handshake, after which the host may die at once
    try:
        service = new_server(plugin)
    except InvalidPlugin as e:
        print(str(e), file=sys.stderr)
        sys.exit(1)
    if os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        print(f'"{plugin.name}" is an Exocortex plugin: the exocortex host starts it (put it in a plugin '
              "directory, e.g. .exocortex/plugins/), it is not meant to be run by hand.", file=sys.stderr)
        sys.exit(1)
    logger = plugin.logger or Logger(module=plugin.name)
    if os.environ.get("PLUGIN_CLIENT_CERT"):
        logger.error("the host asked for automatic mTLS, which this SDK does not speak; "
                     "start the plugin without AutoMTLS")
        sys.exit(1)
    _serve(plugin, service, logger, parent)


def _serve(plugin: Plugin, service: PluginService, logger: Logger, parent: int) -> NoReturn:
    root = logging.getLogger()
    root.addHandler(HostLogHandler(logger))
    root.setLevel(logging.INFO)

    stop = threading.Event()
    broker = _Broker()
    service.set_host(_HostServices(broker))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=MAX_WORKERS + 3, thread_name_prefix="exocortex"),
                         handlers=_goplugin_handlers(stop, broker),
                         # As in the Go SDK: no bandwidth probe, whose PING with every
                         # data frame would wake the host for an acknowledgement.
                         options=[("grpc.http2.bdp_probe", 0)])
    plugin_pb2_grpc.add_PluginServicer_to_server(service, server)
    path = _socket_path()
    try:
        bound = server.add_insecure_port("unix:" + path)
    except RuntimeError as e:
        bound, err = 0, e
    else:
        err = None
    if not bound:
        logger.error("cannot listen on a Unix socket", path=path, error=str(err or "bind failed"))
        sys.exit(1)
    server.start()

    # stdout carries the handshake line only: everything printed later goes to the
    # host's log, as info records.
    sys.stdout.flush()
    handshake_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = _StdoutToLog(logger)
    line = f"{CORE_PROTOCOL_VERSION}|{PROTOCOL_VERSION}|unix|{path}|grpc|"
    if os.environ.get("PLUGIN_MULTIPLEX_GRPC"):
        line += "|false"  # this SDK does not multiplex the broker; the host says so
    os.write(handshake_fd, (line + "\n").encode())

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def host_gone() -> None:
        logger.info("the host process is gone; exiting", plugin=plugin.name)
        os._exit(0)

    threading.Thread(target=watch_parent, args=(os.getppid, PARENT_POLL_INTERVAL, host_gone, stop, parent),
                     name="exocortex-parent-watch", daemon=True).start()

    while not stop.wait(1.0):
        pass
    # The host asked to shut down (its graceful stop, also how a hot reload ends
    # this process): cancel the tasks still pending on the process's event loops,
    # saying which, let the Shutdown answer go out, then exit.
    aio.close_all(logger)
    server.stop(grace=0.5).wait()
    try:
        os.remove(path)
    except OSError:
        pass
    sys.stdout.flush()
    os._exit(0)


__all__ = ["serve", "watch_parent", "MAGIC_COOKIE_KEY", "MAGIC_COOKIE_VALUE", "CORE_PROTOCOL_VERSION",
           "PARENT_POLL_INTERVAL"]
