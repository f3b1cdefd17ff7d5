"""A TCP proxy that can cut a network path and heal it: what a test or a
harness scenario puts between ONE process (a compute, a conductor) and
the broker to partition that process while it runs on.

``cut()`` resets every proxied connection and stops listening, so the
process sees its connections die and its reconnects refused (as behind a
firewall that rejects); ``heal()`` listens again on the same port. The
process itself is never signalled: it keeps running its guests and its
threads, only its broker is out of reach. Test tooling only."""
import socket
import struct
import threading

BUFFER = 65536


def _reset(sock):
    """Close with RST (SO_LINGER 0): the peer's next read or write fails
    at once, as when a path is cut, instead of a polite FIN."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack('ii', 1, 0))
    except OSError:
        pass
    try:
        # Wakes a pump thread blocked in recv() (close() alone does not)
        # without sending a FIN.
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class TcpProxy:
    """127.0.0.1:``port`` (chosen when 0) -> ``upstream`` (host, port)."""

    def __init__(self, upstream, port=0, host='127.0.0.1'):
        self.upstream = upstream
        self.host = host
        self.port = port
        self._lock = threading.Lock()
        self._pairs = set()
        self._listener = None
        self._accepting = None
        self.cuts = 0
        self.accepted = 0

    # -- lifecycle ---------------------------------------------------------
    def start(self):
        self._listen()
        return self

    def stop(self):
        self.cut()

    @property
    def is_cut(self):
        return self._listener is None

    def cut(self):
        """Drop every connection (RST both ways) and refuse new ones."""
        with self._lock:
            listener, self._listener = self._listener, None
            pairs, self._pairs = self._pairs, set()
            if listener is not None:
                self.cuts += 1
        if listener is not None:
            # shutdown() wakes the accept() of the acceptor thread.
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        for pair in pairs:
            for sock in pair:
                _reset(sock)
        if self._accepting is not None:
            self._accepting.join(5)
            self._accepting = None

    def heal(self):
        """Accept and forward again, on the same port."""
        if self.is_cut:
            self._listen()

    def connections(self):
        with self._lock:
            return len(self._pairs)

    # -- plumbing ----------------------------------------------------------
    def _listen(self):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self.port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        with self._lock:
            self._listener = listener
        self._accepting = threading.Thread(
            target=self._accept, args=(listener,), daemon=True,
            name='tcp-proxy-accept-%d' % self.port)
        self._accepting.start()

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                _reset(client)
                continue
            pair = (client, server)
            with self._lock:
                if self._listener is not listener:
                    # Cut while connecting: this one goes too.
                    _reset(client)
                    _reset(server)
                    return
                self._pairs.add(pair)
                self.accepted += 1
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst, pair),
                                 daemon=True).start()

    def _pump(self, src, dst, pair):
        try:
            while True:
                data = src.recv(BUFFER)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        # One side closed (or the pair was cut): close both, once.
        with self._lock:
            mine = pair in self._pairs
            self._pairs.discard(pair)
        if mine:
            for sock in pair:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
