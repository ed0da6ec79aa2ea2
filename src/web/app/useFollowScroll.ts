/**
 * A conversation's view follows the answer as it grows unless the reader scrolled up; then it stays
 * where they are ("away") until they scroll back down or jump to the latest.
 */
import { type RefObject, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react"

/** `messages` and `live` are what the view shows: each change to them may move the bottom. */
export const useFollowScroll = (messages: unknown, live: unknown, composerBar: RefObject<HTMLDivElement | null>) => {
  const scroller = useRef<HTMLDivElement>(null)
  const content = useRef<HTMLDivElement>(null)
  /** Whether the view follows the bottom: true until the reader scrolls up, again once they are back down. */
  const following = useRef(true)
  const [away, setAway] = useState(false)
  const toBottom = useCallback(() => {
    const element = scroller.current
    if (element) element.scrollTop = element.scrollHeight
  }, [])
  // Follow the bottom while the answer grows (text, a highlighted block, an image loading), unless the reader scrolled up.
  useLayoutEffect(() => {
    if (following.current) toBottom()
  }, [messages, live, toBottom])
  useEffect(() => {
    const inner = content.current
    if (!inner) return
    const observer = new ResizeObserver(() => {
      if (following.current) toBottom()
    })
    observer.observe(inner)
    return () => observer.disconnect()
  }, [toBottom])
  /** Where the list was last scrolled to: a move up is the reader's (following only ever moves down). */
  const lastTop = useRef(0)
  const onScroll = () => {
    const element = scroller.current
    if (!element) return
    const atBottom = element.scrollHeight - element.scrollTop - element.clientHeight < 48
    if (atBottom) following.current = true
    else if (element.scrollTop < lastTop.current - 1) following.current = false
    lastTop.current = element.scrollTop
    setAway(!following.current)
  }
  // The reader's own scrolling up stops the following at once, before the next piece of text pulls the view down.
  const leaveBottom = () => {
    following.current = false
    setAway(true)
  }
  /** Follows the bottom again (a message sent), from the next change on. */
  const resume = () => {
    following.current = true
    setAway(false)
  }
  const jumpToLatest = () => {
    resume()
    toBottom()
    composerBar.current?.querySelector("textarea")?.focus()
  }
  return { scroller, content, away, onScroll, leaveBottom, resume, jumpToLatest }
}
