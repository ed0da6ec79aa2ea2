/**
 * The compat suites' server: one on `backend` whose default model is a fake LLM answering `reply`,
 * with no LLM retries (a scripted failure is seen at once).
 */
import { type FakeLlm, type FakeLlmOptions, startFakeLlm } from "../fixtures/fakeLlm.ts"
import type { Backend } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"

export const startWithFakeLlm = async (
  backend: Backend,
  reply: string,
  env: Record<string, string> = {},
  llmOptions: FakeLlmOptions = {}
): Promise<{ server: TestServer; llm: FakeLlm }> => {
  const llm = await startFakeLlm({ ...llmOptions, defaultReply: { text: reply } })
  const server = await startServer({
    backend,
    env: {
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "sk-test-fake-key-1234567890",
      DEFAULT_MODEL: "fake-model",
      LLM_MAX_RETRIES: "0",
      ...env
    }
  })
  return { server, llm }
}

export const stopWithFakeLlm = async (started: { server?: TestServer; llm?: FakeLlm }) => {
  await started.server?.close()
  await started.llm?.close()
}
