/**
 * An HTTP server of a test's own on 127.0.0.1 and a free port, closed with the scope:
 * a receiver to send to, or a port to hold taken. Also a bare TCP server, for peers
 * that do not speak HTTP (or stop speaking it half-way), and a count of the
 * connections either one saw opened and closed.
 */
import { Duration, Effect, Schedule, type Scope } from "effect"
import { createServer, type RequestListener, type Server } from "node:http"
import * as net from "node:net"

/** The listening server, its port and its base URL. */
export interface LoopbackServer {
  readonly server: Server
  readonly port: number
  readonly url: string
}

/** Listens with `handler` (none: every request waits) until the scope closes. */
export const loopbackServer = (handler?: RequestListener): Effect.Effect<LoopbackServer, never, Scope.Scope> =>
  Effect.orDie(httpServerAt("127.0.0.1", 0, handler))

/**
 * Listens on `host`:`port` (0: a free one) with `handler` until the scope closes; fails
 * with the listen error (a port in use) rather than dying.
 */
export const httpServerAt = (
  host: string,
  port: number,
  handler?: RequestListener
): Effect.Effect<LoopbackServer, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<LoopbackServer, Error>((resume) => {
      const server = createServer(handler)
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen(port, host, () => {
        const { port } = server.address() as net.AddressInfo
        resume(Effect.succeed({ server, port, url: `http://${host}:${port}` }))
      })
    }),
    ({ server }) => Effect.sync(() => server.close())
  )

/** How many connections a server accepted, and how many of them have closed since. */
export interface Connections {
  readonly accepted: () => number
  readonly closed: () => number
}

/** Counts the connections `server` accepts from now on, and their closing. */
export const countConnections = (server: net.Server): Connections => {
  let accepted = 0
  let closed = 0
  server.on("connection", (socket: net.Socket) => {
    accepted++
    socket.on("close", () => closed++)
  })
  return { accepted: () => accepted, closed: () => closed }
}

/**
 * Waits until `count` connections have closed, failing the test if that takes over
 * `within`: a client that holds a hostile server's connection open fails here.
 */
export const closedWithin = (
  connections: Connections,
  within: Duration.DurationInput,
  count = 1
): Effect.Effect<void, Error> =>
  Effect.repeat(Effect.sync(connections.closed), {
    until: (closed) => closed >= count,
    schedule: Schedule.spaced("5 millis")
  }).pipe(
    Effect.timeoutFail({
      duration: within,
      onTimeout: () =>
        new Error(
          `${connections.closed()} of ${connections.accepted()} connections closed within ${
            Duration.format(Duration.decode(within))
          }`
        )
    }),
    Effect.asVoid
  )

/** The listening TCP server, its port, its base URL as HTTP, and its connections. */
export interface LoopbackSocketServer extends Connections {
  readonly server: net.Server
  readonly port: number
  readonly url: string
}

/**
 * A bare TCP server: `onConnection` gets each socket as it is accepted, flowing (what
 * it does not listen for is read and dropped) and its errors ignored (a hostile peer
 * expects resets). Every socket still open is destroyed when
 * the scope closes, so a server that never answers leaves nothing behind.
 */
export const loopbackSocketServer = (
  onConnection: (socket: net.Socket) => void
): Effect.Effect<LoopbackSocketServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<LoopbackSocketServer & { readonly sockets: Set<net.Socket> }>((resume) => {
      const sockets = new Set<net.Socket>()
      const server = net.createServer((socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => {})
        // Read, so that the client's hanging up is seen; `onConnection` may still pause it.
        socket.resume()
        onConnection(socket)
      })
      const connections = countConnections(server)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo
        resume(Effect.succeed({ server, port, url: `http://127.0.0.1:${port}`, sockets, ...connections }))
      })
    }),
    ({ server, sockets }) =>
      Effect.sync(() => {
        for (const socket of sockets) socket.destroy()
        server.close()
      })
  )
