/**
 * A conversation's own settings applied to the turns run in it (migration 0086): its instructions
 * follow the bot's prompt (the bot's own rules still hold), its temperature replaces the bot's,
 * and its model answers unless the request names one (`conversationModel`).
 */
import { Bot } from "../bots/Model.ts"
import type { Session } from "./Model.ts"

type Settings = Pick<Session, "model" | "system_prompt" | "temperature">

/** The bot as a turn in this conversation runs it. */
export const conversationBot = (bot: Bot, session: Settings): Bot => {
  const instructions = session.system_prompt?.trim()
  if (!instructions && session.temperature === null) return bot
  // Checked already: the bot as stored, the settings as the API took them.
  return new Bot({
    ...bot,
    ...(instructions ? { system_prompt: [bot.system_prompt.trim(), instructions].filter(Boolean).join("\n\n") } : {}),
    ...(session.temperature !== null ? { temperature: session.temperature } : {})
  }, true)
}

/** The model a turn in this conversation asks for: the request's, else the conversation's, else none (the channel's or bot's). */
export const conversationModel = (requested: string | undefined, session: Settings): string | undefined =>
  requested ?? session.model ?? undefined

/**
 * What a turn in this conversation runs with: the bot with the conversation's instructions and
 * temperature, and the model. The one place both a direct turn (intake) and a queued one (the task
 * worker) take them from, so a message queued behind a busy session runs as it would have at once.
 */
export const conversationTurn = (bot: Bot, session: Settings, requestedModel: string | undefined) => ({
  bot: conversationBot(bot, session),
  modelOverride: conversationModel(requestedModel, session)
})
