/**
 * Session identity and ports: the inputs every name, host and manifest derives
 * from. A value that would make any derived name invalid is refused here, with
 * the reason, before anything is built.
 */
import { Either, ParseResult, Schema } from "effect"

/** Prefix of every per-session object name. */
export const OBJECT_PREFIX = "telo-run-"

const MAX_LABEL = 63
/** The longest port, in digits: HTTPRoute names and host labels carry it. */
const MAX_PORT_DIGITS = 5
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/**
 * The longest session id: `telo-run-<id>-<port>` must stay a 63-character label for a
 * five-digit port (the host label `<port>-<id>` is shorter still).
 */
export const MAX_SESSION_ID_LENGTH = MAX_LABEL - OBJECT_PREFIX.length - 1 - MAX_PORT_DIGITS

/**
 * Why `id` cannot be a session id, or undefined when it can. The longest derived
 * names bound it: `telo-run-<id>-<port>` (HTTPRoute) and `<port>-<id>` (host label)
 * must stay DNS labels for any port, and `telo-run-<id>` must be a DNS-1035 label.
 */
export const sessionIdProblem = (id: string): string | undefined => {
  if (id.length === 0) return "a session id may not be empty"
  if (!DNS_LABEL.test(id)) {
    return `session id "${id}" must be lower-case letters, digits and '-', starting and ending with a letter or digit`
  }
  if (id.length > MAX_SESSION_ID_LENGTH) {
    return `session id "${id}" is ${id.length} characters; at most ${MAX_SESSION_ID_LENGTH} fit, because the HTTPRoute name "${OBJECT_PREFIX}${id}-<port>" must be at most ${MAX_LABEL} characters`
  }
  return undefined
}

/**
 * A session id: a DNS label short enough for every name derived from it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SessionId = Schema.String.pipe(
  Schema.filter((id) => sessionIdProblem(id) ?? true, { identifier: "SessionId" }),
  Schema.brand("SessionId")
)
/**
 * A valid session id.
 *
 * @since 0.1.0
 * @category models
 */
export type SessionId = typeof SessionId.Type

// Without the message, a bad protocol reads `Expected "tcp", actual "sctp"`: udp goes unmentioned.
/**
 * A port's protocol: only tcp ports are routed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Protocol = Schema.Literal("tcp", "udp").annotations({
  message: (issue) => ({ message: `protocol ${JSON.stringify(issue.actual)} is not tcp or udp`, override: true })
})
/**
 * `tcp` or `udp`.
 *
 * @since 0.1.0
 * @category models
 */
export type Protocol = typeof Protocol.Type

export const PortNumber = Schema.Int.pipe(
  Schema.filter((n) => (n >= 1 && n <= 65535) || `port ${n} is outside 1..65535`, { identifier: "PortNumber" })
)

// Named fields: without them a mapping lacking one is refused as just "is missing".
/**
 * One port of a session and its protocol.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PortMapping = Schema.Struct({
  port: Schema.propertySignature(PortNumber).annotations({ missingMessage: () => "a port mapping needs a port" }),
  protocol: Schema.propertySignature(Protocol).annotations({
    missingMessage: () => "a port mapping needs a protocol (tcp or udp)"
  })
})
/**
 * A port and its protocol.
 *
 * @since 0.1.0
 * @category models
 */
export type PortMapping = typeof PortMapping.Type

/** A session's ports: no (port, protocol) pair twice. */
export const SessionPorts = Schema.Array(PortMapping).pipe(
  Schema.filter((ports) => duplicatePortProblem(ports) ?? true, { identifier: "SessionPorts" })
)

const duplicatePortProblem = (ports: ReadonlyArray<PortMapping>): string | undefined => {
  const seen = new Set<string>()
  for (const p of ports) {
    const key = `${p.port}/${p.protocol}`
    if (seen.has(key)) return `port ${key} is listed twice; each port/protocol pair may appear once`
    seen.add(key)
  }
  return undefined
}

/** The first problem with a decode, as one line. */
const firstProblem = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  return issues[0]?.message ?? error.message
}

/**
 * Decodes a session id, or names what is wrong with it.
 *
 * @since 0.1.0
 * @category rules
 */
export const parseSessionId = (input: string): Either.Either<SessionId, string> =>
  Schema.decodeUnknownEither(SessionId)(input).pipe(
    Either.mapLeft(() => sessionIdProblem(input) ?? "invalid session id")
  )

/**
 * Parses `8080`, `8080/tcp` or `5000/udp` (protocol defaults to tcp), or names the
 * bad value and what would be valid.
 *
 * @since 0.1.0
 * @category rules
 */
export const parsePortSpec = (spec: string): Either.Either<PortMapping, string> => {
  const match = /^(\d{1,5})(?:\/([A-Za-z]+))?$/.exec(spec.trim())
  if (match === null) {
    return Either.left(`port "${spec}" is not of the form PORT or PORT/tcp or PORT/udp (e.g. 8080, 5000/udp)`)
  }
  const port = Number(match[1])
  const protocol = (match[2] ?? "tcp").toLowerCase()
  if (port < 1 || port > 65535) return Either.left(`port "${spec}": ${port} is outside 1..65535`)
  if (protocol !== "tcp" && protocol !== "udp") {
    return Either.left(`port "${spec}": protocol "${match[2]}" is not tcp or udp`)
  }
  return Either.right({ port, protocol })
}

/**
 * Validates a whole list of ports (range, protocol, duplicates).
 *
 * @since 0.1.0
 * @category rules
 */
export const parsePorts = (ports: ReadonlyArray<unknown>): Either.Either<ReadonlyArray<PortMapping>, string> =>
  Schema.decodeUnknownEither(SessionPorts)(ports).pipe(Either.mapLeft(firstProblem))
