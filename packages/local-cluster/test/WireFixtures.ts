/**
 * Raw HTTP for the LocalCluster wire tests: fetch with the body parsed when it is
 * JSON, and a line reader for watch streams, so a test sees exactly what the server sent.
 */
import { Effect } from "effect"

export interface Answer {
  readonly status: number
  readonly contentType: string | null
  readonly headers: Headers
  readonly text: string
  readonly body: any
}

export const call = (url: string, path: string, init: RequestInit = {}) =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(`${url}${path}`, init)
    const text = await response.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return {
      status: response.status,
      contentType: response.headers.get("content-type"),
      headers: response.headers,
      text,
      body
    }
  })

export const send = (url: string, method: string, path: string, body: unknown, contentType = "application/json") =>
  call(url, path, {
    method,
    headers: { "content-type": contentType },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

/** Reads newline-delimited JSON from a streaming response, one line at a time. */
export const lineReader = (response: Response) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  return async (): Promise<string | undefined> => {
    for (;;) {
      const newline = buffer.indexOf("\n")
      if (newline >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + 1)
        return line
      }
      const { done, value } = await reader.read()
      if (done) return buffer === "" ? undefined : buffer
      buffer += decoder.decode(value, { stream: true })
    }
  }
}
