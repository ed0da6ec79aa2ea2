/**
 * Who may frame a bot's widget page now: the origins WebApp.ts puts in its `frame-ancestors`, read
 * per request. Implemented by the widget's service (access/widget, above this folder) and wired in
 * main.ts, so serving the page needs no import of it.
 */
import { Context, type Effect } from "effect"

export class WidgetFraming extends Context.Tag("cairn/WidgetFraming")<WidgetFraming, {
  readonly origins: (bot: string) => Effect.Effect<ReadonlyArray<string>>
}>() {}
