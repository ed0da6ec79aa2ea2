/** A bot's own page: every field the console edits, saved together; delete (not the default bot). */
import { useEffect, useState } from "react"
import { DEFAULT_BOT_ID } from "../../../bots/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { navigate } from "../route.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog } from "../ui/Dialog.tsx"
import { EditForm } from "../ui/EditForm.tsx"
import { AppLink } from "../ui/Link.tsx"
import { Page, Section, When } from "../ui/Page.tsx"
import { useAction, useLoad } from "../ui/useLoad.ts"
import {
  ApiKeyField,
  FallbackModelsField,
  IdentityFields,
  ModelField,
  PromptField,
  SkillsAndCarapaces,
  ThinkingField,
  ToolSections
} from "./BotFields.tsx"
import { type BotDraft, draftOf, fieldsOf } from "./draft.ts"
import { useBotOptions } from "./options.ts"

export const BotEdit = ({ auth, id }: { readonly auth: AuthSession; readonly id: string }) => {
  const bot = useLoad(() => auth.call((client) => client.bots.get({ path: { id } })), [auth, id])
  const options = useBotOptions(auth)
  const [draft, setDraft] = useState<BotDraft | undefined>()
  const [saved, setSaved] = useState(false)
  const [deleting, setDeleting] = useState(false)
  const save = useAction()
  const remove = useAction()
  useEffect(() => {
    if (bot.data) setDraft(draftOf(bot.data))
  }, [bot.data])
  const canWrite = allows(auth, ["bots", "update"])
  const canDelete = allows(auth, ["bots", "delete"]) && id !== DEFAULT_BOT_ID
  const change = (part: Partial<BotDraft>) => {
    setSaved(false)
    setDraft((current) => (current ? { ...current, ...part } : current))
  }
  const submit = async () => {
    if (!draft || !bot.data) return
    const had = bot.data.client_tools
    const updated = await save.run(() => auth.call((client) => client.bots.update({ path: { id }, payload: fieldsOf(draft, had) })))
    if (updated) {
      setSaved(true)
      await bot.reload()
    }
  }
  const confirmDelete = async () => {
    const done = await remove.run(() => auth.call((client) => client.bots.delete({ path: { id } })).then(() => true))
    if (done) navigate("/admin/bots")
  }
  const parts = draft ? { draft, change, options } : undefined
  return (
    <Page
      title={bot.data ? `Bot: ${bot.data.name}` : "Bot"}
      loading={bot.loading}
      error={bot.error}
      actions={
        <>
          <AppLink href="/admin/bots">All bots</AppLink>
          {canDelete ? <button type="button" className="danger" onClick={() => setDeleting(true)}>Delete bot</button> : null}
        </>
      }
    >
      {parts && bot.data ?
        (
          <EditForm
            label="Bot settings"
            canWrite={canWrite}
            onSubmit={() => void submit()}
            submitLabel="Save bot"
            busy={save.busy}
            error={save.error}
            saved={saved}
            lead={
              <p className="muted">
                <span className="mono">{bot.data.id}</span> · from {bot.data.source === "file" ? "a bot file" : "the API"} · changed{" "}
                <When at={bot.data.updated_at.toISOString()} />
              </p>
            }
          >
            <div className="stack">
              <Section title="Identity and model">
                <div className="stack">
                  <IdentityFields {...parts} creating={false} />
                  <div className="grid-2">
                    <ModelField {...parts} />
                    <FallbackModelsField {...parts} />
                    <ThinkingField {...parts} />
                  </div>
                </div>
              </Section>
              <Section title="System prompt">
                <PromptField {...parts} />
              </Section>
              <ToolSections {...parts} />
              <Section title="Skills and carapaces">
                <SkillsAndCarapaces {...parts} />
              </Section>
              <Section title="API key">
                <ApiKeyField {...parts} />
              </Section>
            </div>
          </EditForm>
        ) :
        null}
      <ConfirmDialog
        open={deleting}
        title="Delete bot"
        message={<>Delete the bot “{bot.data?.name}” ({id})? Its channels stay but can no longer answer.</>}
        confirmLabel="Delete"
        onConfirm={() => void confirmDelete()}
        onClose={() => setDeleting(false)}
        busy={remove.busy}
        error={remove.error}
      />
    </Page>
  )
}
