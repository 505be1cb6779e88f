/**
 * A watch over HTTP: the checks the API server makes before it streams, then the
 * store's events (shaped by any fault) as JSON lines, each object as a one-row Table
 * when the client asked for Tables, until the watch's time runs out.
 */
import { Clock, Duration, Effect, Random, Stream } from "effect"
import { randomUUID } from "node:crypto"
import type { ServerResponse } from "node:http"
import { type Decision, shapeWatch } from "../Faults.js"
import { parseFieldSelector, parseLabelSelector, SelectorError } from "../LabelSelector.js"
import type { ClusterStore, StoreWatchEvent } from "../Store.js"
import { selectableFieldsOf } from "./fieldSelectors.js"
import { badRequest, boolParam, type Reply, statusReply } from "./httpReply.js"
import type { Target } from "./httpRouting.js"
import { watchOptions } from "./listOptions.js"
import { unparsableResourceVersion } from "./storeHistory.js"
import { failure } from "./storeStatus.js"
import { tableApiVersion, toTable, wantsTable } from "./tables.js"

/** Without `timeoutSeconds`, a watch lasts between one and two times this, as `--min-request-timeout`. */
const MIN_REQUEST_TIMEOUT_SECONDS = 1800

/** Serves watches on the store; `whenAnswering` holds bytes back while the server is paused. */
export const makeWatch = (
  store: ClusterStore,
  whenAnswering: (res: ServerResponse, effect: Effect.Effect<void>) => Effect.Effect<void>
) =>
(
  acceptHeader: string | undefined,
  res: ServerResponse,
  query: URLSearchParams,
  target: Target,
  decision: Decision
): Effect.Effect<Reply | undefined> =>
  Effect.gen(function*() {
    // Problems the real server reports before it starts streaming.
    const labelSelector = query.get("labelSelector") ?? undefined
    const fieldSelector = query.get("fieldSelector") ?? undefined
    if (labelSelector !== undefined && labelSelector !== "") {
      const parsed = parseLabelSelector(labelSelector)
      if (parsed instanceof SelectorError) return statusReply(badRequest(parsed.message))
    }
    if (fieldSelector !== undefined) {
      const parsed = parseFieldSelector(fieldSelector, selectableFieldsOf(target.resource))
      if (parsed instanceof SelectorError) return statusReply(badRequest(parsed.message))
    }
    const resourceVersion = query.get("resourceVersion") ?? undefined
    if (resourceVersion !== undefined && resourceVersion !== "" && !/^\d+$/.test(resourceVersion)) {
      // The watch cache's parse error is no API error: kube-apiserver answers it as an internal one, with no reason.
      return statusReply(failure(500, undefined, unparsableResourceVersion(resourceVersion)))
    }
    const timeoutParam = query.get("timeoutSeconds")
    // GetTimeoutForWatch: `timeoutSeconds=0` is the same as none, the server's random default.
    const timeoutSeconds = timeoutParam !== null && /^\d+$/.test(timeoutParam) && Number(timeoutParam) > 0
      ? Number(timeoutParam)
      : MIN_REQUEST_TIMEOUT_SECONDS * (1 + (yield* Random.next))
    const allowWatchBookmarks = boolParam(query, "allowWatchBookmarks") === true
    const start = watchOptions(query)
    if (!("sendInitialEvents" in start)) return statusReply(start)

    const events = shapeWatch(
      store.watch(target.resource, target.namespace, {
        ...(labelSelector !== undefined ? { labelSelector } : {}),
        ...(fieldSelector !== undefined ? { fieldSelector } : {}),
        ...(resourceVersion !== undefined ? { resourceVersion } : {}),
        allowWatchBookmarks,
        timeoutSeconds,
        ...(start.sendInitialEvents !== undefined ? { sendInitialEvents: start.sendInitialEvents } : {})
      }),
      decision,
      resourceVersion
    )

    yield* whenAnswering(
      res,
      Effect.sync(() => {
        res.writeHead(200, {
          "content-type": "application/json",
          "cache-control": "no-cache, private",
          "audit-id": randomUUID(),
          "transfer-encoding": "chunked"
        })
        // client-node resolves a watch only once headers arrive: send them before any event.
        res.flushHeaders()
      })
    )
    const write = (line: string) =>
      whenAnswering(
        res,
        Effect.async<void>((resume) => {
          if (res.write(line)) resume(Effect.void)
          else res.once("drain", () => resume(Effect.void))
        })
      )
    const accept = wantsTable(acceptHeader) ? acceptHeader! : undefined
    const includeObject = query.get("includeObject") ?? "Metadata"
    // A watch that asked for Tables gets each object as a one-row Table, as kubectl -w expects.
    const render = (event: StoreWatchEvent): Effect.Effect<unknown> =>
      accept !== undefined && (event.type === "ADDED" || event.type === "MODIFIED" || event.type === "DELETED")
        ? Effect.map(Clock.currentTimeMillis, (now) => ({
          type: event.type,
          object: toTable(
            target.resource,
            [event.object],
            { resourceVersion: event.object.metadata?.resourceVersion ?? "" },
            includeObject,
            tableApiVersion(accept),
            now
          )
        }))
        : Effect.succeed(event)
    // The events that are ready together go out in one write: a socket write costs more
    // than the JSON, and a burst of store writes would otherwise cost one each.
    yield* events.pipe(
      Stream.runForEachChunk((chunk) =>
        Effect.forEach(chunk, render).pipe(
          Effect.flatMap((wires) => write(wires.map((wire) => `${JSON.stringify(wire)}\n`).join("")))
        )
      ),
      Effect.catchAll((status) => write(`${JSON.stringify({ type: "ERROR", object: status })}\n`)),
      Effect.timeoutOption(Duration.seconds(timeoutSeconds))
    )
    yield* whenAnswering(res, Effect.sync(() => res.end()))
    return undefined
  })
