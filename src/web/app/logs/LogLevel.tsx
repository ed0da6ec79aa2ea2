/** The server's running log level: shown to who may read it, changed at once by who may write it. */
import { type LogLevelName, logLevels } from "../../../contract/LogLevels.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { Select } from "../ui/Field.tsx"
import { useAction, useLoad } from "../ui/useLoad.ts"

export const LogLevelControl = ({ auth }: Pick<PageProps, "auth">) => {
  const level = useLoad(() => auth.call((client) => client.logs.getLevel()), [auth])
  const action = useAction()
  const canSet = allows(auth, ["logs", "setLevel"])
  const set = async (next: LogLevelName) => {
    if (await action.run(() => auth.call((client) => client.logs.setLevel({ payload: { level: next } })))) await level.reload()
  }
  return (
    <div className="row">
      {level.data ?
        (
          canSet ?
            (
              <Select
                label="Log level"
                value={level.data.level}
                onChange={(value) => void set(value as LogLevelName)}
                options={logLevels.map((l) => ({ value: l, label: l }))}
                description="This process's, at once; LOG_LEVEL sets it again at the next start."
              />
            ) :
            (
              <span>
                Log level <strong>{level.data.level}</strong>
              </span>
            )
        ) :
        null}
      {level.error || action.error ? <p role="alert" className="error">{level.error ?? action.error}</p> : null}
    </div>
  )
}
