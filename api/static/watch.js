// Watching a game while another player (a friend, another device) is to move: the page asks for the events it
// has not shown yet and hands every answer that brings some to `onMoves`. One function, so that the way of
// hearing of moves changes here alone: the server's long poll (GET /v1/games/{id}/events?after=N, answered as
// soon as the game has a new event, or 304 after `wait` seconds), and on a server without that route a plain
// poll of GET /v1/games/{id}?since=N every POLL_MS.

import { api, ApiProblem } from "./api.js";

export const POLL_MS = 1500;
/** Seconds the server may hold a long poll (under the idle timeouts of common proxies). */
export const LONG_POLL_WAIT = 20;
const RETRY_MS = 1000; // after a failed ask, or when the server had no room for a long poll and named no wait

/** Whether a refusal says that the server has no long-poll route (an older server): then the page polls. */
const noLongPoll = (err) => err instanceof ApiProblem && (err.status === 405 || (err.status === 404 && err.code !== "game_not_found"));

/**
 * Watch game `gameId`: `since()` is the number of events the page has shown, `onMoves(state)` is called (and
 * awaited) with a state holding the events from there on whenever there are new ones. `onError(err)`: a failed
 * ask (the next one tries again). Returns {stop()}.
 */
export function watchGame(gameId, { since, onMoves, onError = () => {}, interval = POLL_MS }) {
  let stopped = false;
  let timer = null;
  let longPoll = true;
  const next = (ms) => {
    if (!stopped) timer = setTimeout(ask, ms);
  };
  /** One ask: the state with new events (or null), and how long to wait before the next. */
  async function fetchNews(n) {
    if (longPoll) {
      const asked = Date.now();
      try {
        const got = await api.events(gameId, n, LONG_POLL_WAIT);
        if (!got.notModified) return { state: got, wait: 0 };
        // nothing new: ask again at once after a wait held by the server, else not before it said (or a second)
        const held = Date.now() - asked >= RETRY_MS;
        return { state: null, wait: Number.isFinite(got.retryAfter) ? got.retryAfter * 1000 : held ? 0 : RETRY_MS };
      } catch (err) {
        if (!noLongPoll(err)) throw err;
        longPoll = false;
      }
    }
    return { state: await api.state(gameId, n), wait: interval };
  }
  async function ask() {
    if (stopped) return;
    let wait;
    try {
      const n = since();
      const news = await fetchNews(n);
      wait = news.wait;
      if (!stopped && news.state && news.state.event_count > n) {
        await onMoves(news.state);
        if (since() === n) wait = interval; // not taken now (the page was busy): the next ask brings it again
      }
    } catch (err) {
      if (!stopped) onError(err);
      wait = RETRY_MS;
    }
    next(wait);
  }
  next(0);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
