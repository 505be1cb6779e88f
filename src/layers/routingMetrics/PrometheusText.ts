/**
 * Effect metrics in the Prometheus text exposition format (version 0.0.4): counters,
 * gauges and histograms, one `# HELP` and `# TYPE` per name, series sorted so two
 * scrapes of the same state read the same. Pure: a function of a metrics snapshot.
 */
import { Option } from "effect"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"

/** The content type of the text format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const escapeLabel = (text: string): string => text.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

const formatNumber = (value: number | bigint): string => {
  if (typeof value === "bigint") return value.toString()
  if (value === Number.POSITIVE_INFINITY) return "+Inf"
  if (value === Number.NEGATIVE_INFINITY) return "-Inf"
  return Number.isNaN(value) ? "NaN" : String(value)
}

type Labels = ReadonlyArray<readonly [string, string]>

const formatLabels = (labels: Labels): string =>
  labels.length === 0 ? "" : `{${labels.map(([key, value]) => `${key}="${escapeLabel(value)}"`).join(",")}}`

const sample = (name: string, labels: Labels, value: number | bigint): string =>
  `${name}${formatLabels(labels)} ${formatNumber(value)}`

/** The lines of one series; frequencies and summaries are not used here and are left out. */
const seriesLines = (name: string, labels: Labels, state: MetricState.MetricState.Untyped): ReadonlyArray<string> => {
  if (MetricState.isCounterState(state)) return [sample(name, labels, state.count)]
  if (MetricState.isGaugeState(state)) return [sample(name, labels, state.value)]
  if (MetricState.isHistogramState(state)) {
    const buckets = state.buckets.map(([bound, count]) =>
      sample(`${name}_bucket`, [...labels, ["le", formatNumber(bound)]], count)
    )
    // Effect's boundaries end at +Inf already; a histogram built without it still needs the bucket.
    const hasInf = state.buckets.some(([bound]) => bound === Number.POSITIVE_INFINITY)
    return [
      ...buckets,
      ...(hasInf ? [] : [sample(`${name}_bucket`, [...labels, ["le", "+Inf"]], state.count)]),
      sample(`${name}_sum`, labels, state.sum),
      sample(`${name}_count`, labels, state.count)
    ]
  }
  return []
}

const typeOf = (state: MetricState.MetricState.Untyped): string | undefined =>
  MetricState.isCounterState(state)
    ? "counter"
    : MetricState.isGaugeState(state)
    ? "gauge"
    : MetricState.isHistogramState(state)
    ? "histogram"
    : undefined

/** The exposition of every metric whose name starts with `prefix`. */
export const prometheusText = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>, prefix: string): string => {
  const families = new Map<
    string,
    { help: string | undefined; type: string; series: Array<{ key: string; lines: ReadonlyArray<string> }> }
  >()
  for (const pair of pairs) {
    const { name, description, tags } = pair.metricKey
    const type = typeOf(pair.metricState)
    if (!name.startsWith(prefix) || type === undefined) continue
    const labels: Labels = tags.map((tag) => [tag.key, tag.value] as const).toSorted(([a], [b]) => a.localeCompare(b))
    const family = families.get(name) ?? { help: Option.getOrUndefined(description), type, series: [] }
    families.set(name, family)
    family.series.push({ key: formatLabels(labels), lines: seriesLines(name, labels, pair.metricState) })
  }
  const lines: Array<string> = []
  for (const name of [...families.keys()].sort()) {
    const family = families.get(name)!
    if (family.help !== undefined) lines.push(`# HELP ${name} ${escapeHelp(family.help)}`)
    lines.push(`# TYPE ${name} ${family.type}`)
    for (const series of family.series.toSorted((a, b) => a.key.localeCompare(b.key))) lines.push(...series.lines)
  }
  return lines.length === 0 ? "" : lines.join("\n") + "\n"
}
