/** The conversation's documents as chips in the composer: each with its state, and a button that removes it. */
import { DocumentIcon } from "../shared/composer/icons.tsx"
import type { SessionDocumentChip } from "./useSessionDocuments.ts"

const stateText: Record<SessionDocumentChip["state"], string> = {
  uploading: "Uploading…",
  reading: "Reading and indexing…",
  ready: "Ready",
  failed: "Failed"
}

export const SessionDocumentChips = ({ chips, onRemove }: {
  readonly chips: ReadonlyArray<SessionDocumentChip>
  readonly onRemove: (chip: SessionDocumentChip) => void
}) =>
  chips.length === 0 ?
    null :
    (
      <ul className="cairn-composer__documents" aria-label="Documents in this conversation" data-testid="session-documents">
        {chips.map((chip) => (
          <li key={chip.key} className={`cairn-composer__document cairn-composer__document--${chip.state}`} data-state={chip.state}>
            <DocumentIcon />
            <span className="cairn-composer__document-name">{chip.name}</span>
            <span className="cairn-composer__document-state" role={chip.state === "failed" ? "alert" : undefined}>
              {chip.state === "failed" ? chip.error ?? stateText.failed : stateText[chip.state]}
            </span>
            {chip.state === "uploading" || chip.state === "reading" ?
              null :
              (
                <button
                  type="button"
                  className="cairn-composer__document-remove"
                  aria-label={`Remove ${chip.name}`}
                  onClick={() => onRemove(chip)}
                >
                  <span aria-hidden="true">×</span>
                </button>
              )}
          </li>
        ))}
      </ul>
    )
