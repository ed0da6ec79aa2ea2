/**
 * Mails screened per second by the mailbox integration, over the corpus in test/fixtures/mail/
 * (150 mails, parsed once up front):
 *   parse       mailparser on the raw mail (the baseline: what reading a mail costs anyway)
 *   layers 1-2  markup to text and the deterministic checks (`screenText`)
 *   pipeline 0  all four layers with a fake classifier that answers "safe" at once
 *   pipeline N  the same with a classifier that answers after N ms, over the ordinary mails only
 *               (an injection stopped by layer 2 never reaches the classifier; ordinary mail always
 *               does), one mail at a time as the poller screens them
 * Interleaved rounds, median. Run: npx tsx bench/mailScreening.ts [rounds] [classifierDelayMs]
 */
import { simpleParser } from "mailparser"
import * as path from "node:path"
import { screen, screenText } from "../integrations/mailbox/screening/pipeline.ts"
import { alwaysSafe, readCorpus, screeningOptions as options } from "../test/support/mailCorpus.ts"

const rounds = Number(process.argv[2] ?? 7)
const delayMs = Number(process.argv[3] ?? 200)
const corpus = await readCorpus(path.resolve(import.meta.dirname, "../test/fixtures/mail"))
const raws = corpus.map((entry) => entry.raw)
const mails = corpus.map((entry) => entry.mail)
const ordinary = corpus.filter((entry) => entry.kind === "ordinary").map((entry) => entry.mail)
const classifier = alwaysSafe

// The delayed case must measure the whole path: an ordinary mail passes all four layers.
const probe = await screen(ordinary[0]!, options, classifier(0))
if (probe.outcome !== "passed") throw new Error(`an ordinary mail was quarantined at layer ${probe.layer}: ${probe.reason}`)

/** Mails per second for `count` mails, one at a time. */
const rate = async (count: number, work: (i: number) => unknown | Promise<unknown>) => {
  const started = process.hrtime.bigint()
  for (let i = 0; i < count; i++) await work(i % mails.length)
  return count / (Number(process.hrtime.bigint() - started) / 1e9)
}

const cases: Record<string, () => Promise<number>> = {
  parse: () => rate(raws.length, (i) => simpleParser(raws[i]!)),
  "layers 1-2": () => rate(mails.length * 4, (i) => screenText(mails[i]!)),
  "pipeline 0 ms": () => rate(mails.length, (i) => screen(mails[i]!, options, classifier(0))),
  // A slow classifier only needs a few mails to show its rate.
  [`pipeline ${delayMs} ms`]: () => rate(10, (i) => screen(ordinary[i % ordinary.length]!, options, classifier(delayMs)))
}

const samples: Record<string, Array<number>> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]))
for (let round = 0; round < rounds; round++) for (const [name, run] of Object.entries(cases)) samples[name]!.push(await run())
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const parse = median(samples.parse!)
console.log(`${mails.length} mails, ${rounds} rounds (median mails/s; ratio to parsing)`)
for (const name of Object.keys(cases)) {
  const m = median(samples[name]!)
  console.log(`${name.padEnd(16)} ${m.toFixed(1).padStart(9)} mails/s  ${(m / parse).toFixed(2)}x parse  ${(1000 / m).toFixed(2)} ms/mail`)
}
