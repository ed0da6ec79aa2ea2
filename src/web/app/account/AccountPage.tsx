/**
 * The signed-in user's account: who they are, and changing their own password (the current one,
 * then the new one twice). What is wrong is said next to the field; a change signs out every other
 * session, and this one goes on with the tokens the server answers.
 */
import { type FormEvent, useState } from "react"
import { formErrors } from "../../shared/calls.ts"
import type { PageProps } from "../pages.ts"
import { TextField } from "../ui/Field.tsx"
import { Page, Section } from "../ui/Page.tsx"

const fields = ["current_password", "new_password", "repeat"] as const

const AccountPage = ({ auth }: PageProps) => {
  const [current, setCurrent] = useState("")
  const [next, setNext] = useState("")
  const [repeat, setRepeat] = useState("")
  const [errors, setErrors] = useState<Readonly<Record<string, string>>>({})
  const [other, setOther] = useState<string | undefined>()
  const [done, setDone] = useState(false)
  const [busy, setBusy] = useState(false)

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setErrors({})
    setOther(undefined)
    setDone(false)
    if (next !== repeat) return setErrors({ repeat: "The two new passwords are not the same." })
    setBusy(true)
    try {
      const pair = await auth.call((client) => client.auth.changePassword({ payload: { current_password: current, new_password: next } }))
      await auth.adopt(pair)
      setCurrent("")
      setNext("")
      setRepeat("")
      setDone(true)
    } catch (failure) {
      const split = formErrors(failure, fields)
      setErrors(split.byField)
      setOther(split.other)
    } finally {
      setBusy(false)
    }
  }

  return (
    <Page title="Your account">
      <p>
        Signed in as <strong>{auth.user?.username}</strong> ({auth.user?.role}).
      </p>
      <Section title="Change password">
        <form className="stack narrow" onSubmit={(event) => void submit(event)} aria-label="Change password">
          <TextField
            label="Current password"
            type="password"
            autoComplete="current-password"
            required
            value={current}
            onChange={setCurrent}
            error={errors.current_password}
          />
          <TextField
            label="New password"
            type="password"
            autoComplete="new-password"
            required
            value={next}
            onChange={setNext}
            description="At least 8 characters. Your other sessions are signed out."
            error={errors.new_password}
          />
          <TextField
            label="New password again"
            type="password"
            autoComplete="new-password"
            required
            value={repeat}
            onChange={setRepeat}
            error={errors.repeat}
          />
          {other ? <p role="alert" className="error">{other}</p> : null}
          {done ? <p role="status">Password changed. Your other sessions are signed out.</p> : null}
          <div className="row">
            <button type="submit" className="primary" disabled={busy}>Change password</button>
          </div>
        </form>
      </Section>
    </Page>
  )
}

export default AccountPage
