/**
 * Search over all the user's conversations, by the words of their titles and messages (the server's
 * full-text search), as the user types; each result names its conversation and shows the words
 * around the match. Ctrl+K puts the cursor here.
 */
import { useEffect, useId, useState } from "react"
import { describeError } from "../shared/calls.ts"
import type { AuthSession } from "../shared/session.ts"
import { navigate } from "./route.ts"

interface Match {
  readonly session: { readonly id: string; readonly title: string | null; readonly archived: boolean }
  readonly snippet: string | null
}

/** How long typing pauses before the search is asked: one request per word, not per key. */
const typingPauseMs = 250

export const ChatSearch = ({ auth, onOpen }: { readonly auth: AuthSession; readonly onOpen: () => void }) => {
  const [query, setQuery] = useState("")
  const [results, setResults] = useState<ReadonlyArray<Match> | undefined>()
  const [error, setError] = useState<string | undefined>()
  const inputId = useId()

  useEffect(() => {
    const text = query.trim()
    if (!text) {
      setResults(undefined)
      return
    }
    let gone = false
    const timer = setTimeout(() => {
      auth.call((client) => client.sessions.search({ urlParams: { q: text, limit: 20 } })).then(
        (found) => {
          if (gone) return
          setError(undefined)
          setResults(found.results)
        },
        (failure: unknown) => !gone && setError(describeError(failure))
      )
    }, typingPauseMs)
    return () => {
      gone = true
      clearTimeout(timer)
    }
  }, [auth, query])

  return (
    <div role="search" className="chat-search">
      <label htmlFor={inputId} className="visually-hidden">Search conversations</label>
      <input
        id={inputId}
        type="search"
        data-testid="chat-search"
        placeholder="Search conversations"
        value={query}
        onChange={(event) => setQuery(event.target.value)}
        onKeyDown={(event) => event.key === "Escape" && query && (event.stopPropagation(), setQuery(""))}
      />
      {error ? <p role="alert" className="error">{error}</p> : null}
      {results ?
        (
          <ul className="list search-results" data-testid="search-results" aria-label="Search results">
            {results.map(({ session, snippet }) => (
              <li key={session.id}>
                <a
                  className="item"
                  href={`/chat/${session.id}`}
                  onClick={(event) => {
                    event.preventDefault()
                    setQuery("")
                    onOpen()
                    navigate(`/chat/${session.id}`)
                  }}
                >
                  <span>{session.title ?? "Untitled"}{session.archived ? " (archived)" : ""}</span>
                  {snippet ? <small className="muted snippet">{snippet}</small> : null}
                </a>
              </li>
            ))}
            {results.length === 0 ? <li className="muted">No conversation matches.</li> : null}
          </ul>
        ) :
        null}
    </div>
  )
}
