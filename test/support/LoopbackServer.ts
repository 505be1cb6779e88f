/**
 * An HTTP server of a test's own on 127.0.0.1 and a free port, closed with the scope:
 * a receiver to send to, or a port to hold taken.
 */
import { Effect, type Scope } from "effect"
import { createServer, type RequestListener, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** The listening server, its port and its base URL. */
export interface LoopbackServer {
  readonly server: Server
  readonly port: number
  readonly url: string
}

/** Listens with `handler` (none: every request waits) until the scope closes. */
export const loopbackServer = (handler?: RequestListener): Effect.Effect<LoopbackServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<LoopbackServer>((resume) => {
      const server = createServer(handler)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, port, url: `http://127.0.0.1:${port}` }))
      })
    }),
    ({ server }) => Effect.sync(() => server.close())
  )
