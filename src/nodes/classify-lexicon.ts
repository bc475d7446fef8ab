/**
 * Word lists and patterns for the inbox-task classifier (see classify.ts).
 *
 * Everything here is general English usage for work notes, not vocabulary of
 * one product: verb lists, note-taking prefixes, defect idioms, time phrases.
 * All patterns run on lower-cased text with normalised quotes and dashes.
 */

const set = (words: string): Set<string> => new Set(words.trim().split(/\s+/))

/**
 * Verbs that, first in a clause, almost always make it an imperative ("Send the
 * contract", "Investigate"). Base forms only; see AMBIGUOUS_VERBS for the rest.
 */
export const VERBS = set(`
  accept add adjust advise alert align analyse analyze annotate announce apply approve archive arrange
  ask assess assign attach attend automate backfill benchmark block brainstorm brief bring build bump
  buy calculate cancel capture categorise categorize chase choose circle clarify clean coach collect
  compare compile complete compose configure confirm congratulate connect consolidate contact convert
  coordinate create debrief debug decide define delegate delete deliver demand deploy deprecate
  deprovision describe determine diagnose diagram dial dig disable discuss do double double-check
  downgrade download draw edit enable encrypt ensure escalate evaluate exchange expand explain explore
  extend extract facilitate fetch figure fill finalise finalize find finish fire flush follow forward
  gather generate get give go grab halt hand harden hire identify implement improve include inform
  inspect install integrate introduce investigate invite join keep kick kill lease let lift limit
  localise localize lock look loop loosen make measure meet mentor migrate moderate monitor negotiate
  notify nudge offboard onboard optimise optimize organise organize outline pause pay phone plot
  postpone prepare present prioritise prioritize promote proofread propose protect prototype provide
  provision prune publish purchase purge put qualify quantify raise reach read reassign rebuild
  reconcile reconfigure recover recruit redeploy redesign redirect reduce refactor refine refresh
  refund register reinstall reject remind remove rename renegotiate renew rent reopen reorganise
  reorganize repair replace reply reproduce reroute rerun reschedule resend reserve resize resolve
  respond restart restore restrict restyle resubmit retest retire retry revert revise revisit revoke
  rewrite ring roll rotate scan scope script secure select send settle shorten simplify sketch skim
  source spin split stamp standardise standardize stop streamline submit summarise summarize sunset
  swap take teach tell terminate thank tidy tighten transcribe translate triage troubleshoot try tune
  tweak tweet unblock uninstall unpublish upload upsell validate verify warn welcome wipe wire
  wireframe wrap write
`)

/**
 * Verbs that are just as often nouns at the start of a note ("Support volume
 * dropped", "Order swag for…", "Review of the contract…"). These count as an
 * imperative only when the next word looks like an object (see classify.ts).
 */
export const AMBIGUOUS_VERBS = set(`
  answer audit back bill book call change charge chat check clear close code copy cost date decrease
  demo design document draft drop e-mail email estimate export file fix flag forecast hold host import
  increase interview intro invoice launch lead link list log lower mail map mark message move note
  offer open order page patch pick pilot ping pitch plan port post prep price print process pull push
  quote record release report request research reset return review run sample scale schedule set share
  ship show sign sort spec stage start study support survey switch sync tag talk test text track train
  transfer trial trim turn update upgrade visit watch work
`)

/** Phrasal verbs whose first word alone would be weak ("look at", "find out"). */
export const PHRASAL =
  /^(look (at|into|over)|find out|figure out|line up|set aside|pin down|nail down|hash out|iron out|flesh out|map out|think through|talk through|walk through|go through|dig into|chase up|wrap up|close out|round up|ramp up|scale up|spin up|tear down|back up|clear out|weed out|write down|jot down|put together|pull together|follow up|set up|clean up|tidy up|sort out|reach out|circle back|hand (off|over)|kick off|roll (back|out)|sign (off|up)|spec out|write up|check (in|on|with)|double[- ]check|catch up|loop in|shut (off|down)|turn (off|on)|take down|get (back|rid))\b/

/** Words after a clause-initial ambiguous verb that show it is used as a verb. */
export const OBJECT_START = set(`
  the a an this that these those our my your their his her its all any some every each both it them him
  me us up out back down off over into to about through whether if why how what who when where
  which more new old another other everyone everybody
`)

/**
 * Finite verbs/auxiliaries: after a clause-initial noun they mark a statement
 * ("Support volume rose 8%"). Regular past tenses (-ed) are checked by suffix;
 * irregular ones and trend verbs are listed, minus forms that double as nouns.
 */
export const FINITE = set(`
  is are was were has have had will would can could should does did do keeps kept seems looks
  isn't aren't wasn't weren't hasn't haven't doesn't didn't won't can't
  rose fell grew went came became took made got saw ran sold won began brought bought caught drove felt
  found gave meant met said spent stood told thought wrote
  rises falls grows spikes doubles halves jumps climbs dips peaks plateaus increases decreases
`)

/**
 * Head nouns of note-taking prefixes that always mean "something to keep":
 * "Idea: …", "Lesson from …", "Renewal call notes, …", "Q3 offsite outcome: …".
 */
export const MEMO_NOUNS = set(`
  assumption benchmark bet datapoint datapoints debrief decision decisions fact facts finding findings
  hunch hypothesis idea ideas insight insights inspiration interview interviews learning learnings
  lesson lessons minutes musing notes observation observations outcome outcomes pattern policy poll
  post-incident post-mortem postmortem principle principles quote quotes readout recap recommendation
  recommendations result results retro retrospective rule rules rumor rumour shortlist stat statistic
  stats summary survey takeaway takeaways theme theory thought thoughts til tip tips trend trivia visit
  wish wishes
`)

/** Reported-speech prefixes: memo, unless they report a defect in our product. */
export const REPORT_NOUNS = set(`feedback complaint comment comments request verbatim`)

/** Attention prefixes: memo unless what follows is itself an order ("Reminder: call X"). */
export const ATTENTION =
  /^(reminder( to self)?|note( to self)?|nb|n\.b\.|fyi|psa|heads[- ]up|don't forget|do not forget|remember|keep in mind|good to know|worth (knowing|noting|remembering)|watch out|beware|careful|important|interesting|fun fact|for the record|context|background|aside)\b/

/** Headings that announce a task. */
export const TASK_PREFIX =
  /^(todo|to[- ]do|action( item)?s?|task|bug|defect|fix|follow[- ]?up|next steps?|blocker|incident|hotfix|p[0-2]|sev[- ]?[0-2])\b/

/** Standing rules phrased as orders are memos: "Never ship…", "Always CC…". */
export const RULE_START =
  /^(never|always|avoid|don't|do not|no one should|nobody should|remember that|remember:|keep in mind|note that|not a bug|by design|rule of thumb)\b/

/** …but "Remember to X" / "Don't forget to X" ask for an action. */
export const REMIND_TO_ACT = /^(remember|don't forget|do not forget|make sure|be sure) to \w+/

/** Ideas and possibilities: memo. */
export const HEDGE_START =
  /^(maybe|perhaps|possibly|possible|potential(ly)?|hypothetically|in theory|theoretically|in principle|worst case|what if|how about|what about|someday|some day|one day|in the future|long[- ]term|would be (nice|cool|great|good)|wouldn't it be|it would be|i wonder|wonder (if|whether)|could we|we could|might|consider|imagine|random thought|thinking about|food for thought)\b/

/** Past-tense report openers: "Noticed that…", "Heard at…", "Decided at…". */
export const REPORT_START =
  /^(noticed|heard|saw|seen|learned|learnt|found out|realised|realized|spotted|read|decided|agreed|we decided|we agreed|turns out|apparently|from)\b/

/** Requests addressed to someone. */
export const REQUEST =
  /^(please|pls|plz|kindly|can you|could you|would you|can someone|could someone|someone (should|needs to|must|has to)|@\w+)\b/

/** Decision or check questions that need an answer: "Should we…?", "Do we need…?". */
export const QUESTION_TASK =
  /^(should we|do we (need|have|still)|can we|are we (allowed|compliant|still)|did we|have we|is our|is the|does our|does the|which (vendor|option|one|plan|tool))\b/

/** Obligation: "Need a decision…", "We need to…", "statement needed", "due next Thursday". */
export const OBLIGATION =
  /(^(we |i |you )?(still |really |urgently )?(need|needs|must|have to|has to|gotta|got to)\b)|\b(\w+ needed|needs to be \w+ed|due (today|tonight|tomorrow|by|on|in|at|next|this|before|end|eod|asap|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|due to (\w+ ){0,3}(today|tonight|tomorrow|by|on|next|this|monday|tuesday|wednesday|thursday|friday)|deadline)\b|\b(must|has to|have to|needs?|wants?|expects?|asked for|requested|waiting (on|for))\b.{0,60}\b(today|tonight|tomorrow|asap|eod|(by|before) (the )?(end of|monday|tuesday|wednesday|thursday|friday|saturday|sunday|noon|midnight|\d))/

/** "<Speaker>: '<quote>'": reported speech. */
export const SPEAKER_QUOTE = /^[^:'"]{2,60}:\s*["']/

/** Meetings and nominalised tasks: "Coffee with X next month", "Review of the Y project". */
export const TASK_NOUN =
  /^([\w'-]+ ){0,2}(review|audit|follow-up|followup|clean-up|cleanup|call|meeting|chat|coffee|lunch|dinner|breakfast|drinks|sync|catch-up|catchup|1:1|one-on-one|demo|walkthrough|kickoff|kick-off|check-in|intro|introduction|session|training|handover|handoff|migration|upgrade|refactor|rollout|setup|prep|interview|appointment) (with|of|for|on|about|re)\b/

/** Something to produce and hand over: "Thank-you note to…", "Reply to…". */
export const DELIVERABLE_TO =
  /^([\w'-]+ ){0,3}(note|email|e-mail|message|letter|reply|response|invite|invitation|card|gift|proposal|contract|statement|announcement|writeup|write-up|docs|documentation|release notes|changelog|faq|guide|tutorial|runbook|rfc|deck|slides|blog post|article|press release) (to|for)\b(?! self)/

/**
 * A defect in a product: crash, error, broken, truncated, duplicated, stale
 * copy, being rejected, not being sent… Deliberately about symptoms, not areas.
 */
export const DEFECT = new RegExp(
  [
    String.raw`\bcrash(es|ed|ing)?\b`,
    String.raw`\bbroken\b`,
    String.raw`\bbreaks\b`,
    String.raw`\bfail(s|ed|ing|ure|ures)?\b`,
    String.raw`\berrors?\b`,
    String.raw`\bexceptions?\b`,
    String.raw`\b(is|are|was|were|went|goes|still|been) down\b`,
    String.raw`\bdown (for|since|across|again|in(?= [a-z])|everywhere|globally)\b`,
    String.raw`\b(skips|ignores|omits)\b`,
    String.raw`\b(arrives?|comes?|goes|sent|shows?|loads?|saves?|exports?|prints?) without\b`,
    String.raw`\b(sideways|upside[- ]down|rotated|blurry|stretched|pixelated|squashed|off-cent(er|re))\b`,
    String.raw`\bdown\s*([-,;]|$)`,
    String.raw`\boutage\b`,
    String.raw`\bcuts? off\b`,
    String.raw`\btruncat\w*`,
    String.raw`\bchok(es|ing|ed)\b`,
    String.raw`\bduplicat(es|ed|ing)\b(?! (are|is|in the|from))`,
    String.raw`\btwice\b`,
    String.raw`\bdouble[- ]?(charg|post|bill|count|send)\w*`,
    String.raw`\breject(s|ed|ing)\b`,
    String.raw`\btakes? (\d+|forever|ages|minutes) (\w+ )?to (load|open|save|sync|send|render|start|respond|finish)\b`,
    String.raw`\bnot working\b`,
    String.raw`\b(doesn't|does not|don't|won't|can't|cannot|didn't) (work|load|open|save|sync|send|log ?in|sign ?in|get in|connect|render|show|display|print|export|import|upload|download|update|submit|pay|legally|find|respond|start|finish|appear)\b`,
    String.raw`\b(isn't|aren't|wasn't|weren't|not) being \w+`,
    String.raw`\bnot (sent|saved|stamped|delivered|marked|synced|syncing|loading|loaded|updated|updating|showing|shown|processed|received|working|rendering|firing|triggering|arriving|appearing|going out|coming through|connecting|responding|opening|printing|exporting|importing|uploading|downloading|sending|saving|matching|applying|refreshing)\b`,
    String.raw`\bwrong\b`,
    String.raw`\bmissing\b`,
    String.raw`\bblank\b`,
    String.raw`\bstuck\b`,
    String.raw`\bhang(s|ing)\b`,
    String.raw`\bfreez(es|ing)\b`,
    String.raw`\btim(es|ed|ing) out\b`,
    String.raw`\btimeouts?\b`,
    String.raw`\bbugs?\b`,
    String.raw`\bbuggy\b`,
    String.raw`\bglitch\w*`,
    String.raw`\btypos?\b`,
    String.raw`\b(broken|dead) links?\b`,
    String.raw`\bstill (mentions|shows|says|lists|uses|links|points|displays|references|has|contains|charges|sends)\b`,
    String.raw`\bmisaligned\b`,
    String.raw`\boverlap(s|ping)\b`,
    String.raw`\bgarbled\b`,
    String.raw`\bunreadable\b`,
    String.raw`\bunresponsive\b`,
    String.raw`\breturns? (a |an )?(5\d\d|4\d\d|error|null|nothing|empty|wrong)\b`,
    String.raw`\bshows? (0|nan|undefined|null|wrong|the wrong|\$?0\.00|\d+\.00)\b`,
    String.raw`\bovercharg\w*`,
    String.raw`\bkeeps? \w+ing (after|even|when|although)\b`,
    String.raw`\breported by\b`,
    String.raw`\b(too|very|really|super|painfully) slow\b`,
    String.raw`\bincorrect(ly)?\b`,
    String.raw`\bexpir(es|ed|ing)\b`,
    String.raw`\b(outdated|out of date|obsolete|stale)\b`,
    String.raw`\b(unreachable|unavailable|inaccessible|locked out|lost access)\b`,
    String.raw`\b(is|are|went|goes) offline\b`,
    String.raw`\bdouble-\w+ed\b`,
    String.raw`\bcharg(ed|ing|es)\b.{0,30}\b(twice|again|double)\b`,
    String.raw`\bshows? (last (year|week|month)'s|old|outdated|stale|the previous|someone else's)\b`,
    String.raw`\b(drops?|dropping|loses|losing|lost|wipes?|wiping|deletes?|deleting|overwrites?|erases?|resets?)\b (\w+ ){0,2}(answers?|data|changes|entries|records|files|progress|work|messages|settings|history|drafts?|uploads?|photos?|notes|submissions?|grades?|scores?)\b`,
    String.raw`\bregress(ion|ed)\b`,
    String.raw`\bbounc(es|ing)\b`,
    String.raw`\b(throws?|throwing)\b`,
  ].join('|'),
)

/** Statements that explain away a defect: fixed, by design, habitual third-party behaviour. */
export const DEFECT_VETO =
  /\b(not a bug|came from|not our (code|fault|bug|side)|(was|were) caused by|root cause|turned out|last (week|month|quarter|year|sprint|night)'s (\w+ )?(outage|incident|crash|downtime|failure|bug)|by design|works as (intended|expected|designed)|was fixed|were fixed|got fixed|fix shipped|has been quiet|no longer|went away|resolved|every (\d+ )?(second|minute|hour|day|night|morning|evening|week|weekend|month|quarter|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december)s?|usually|typically|tends? to)\b/

/** Someone else's data is reachable: exposure or security incident. */
export const SECURITY =
  /\b(expos(ed|es|ing|ure)|leak(ed|ing|s)?|breach(ed|es)?|compromised|stolen|phishing|hacked|unauthori[sz]ed|malware|ransomware|vulnerab\w+|publicly (accessible|readable|visible))\b|\bpublic (\w+ ){0,2}(bucket|repo|repository|folder|link|url|drive|database|db|endpoint|index|gist|s3)\b|\b(can|could) (see|view|access|download|edit|read) (\w+ ){0,3}(other|another|someone else's|each other's|\w+'s)\b|\bvisible (to|on) (\w+ ){0,2}(other|everyone|anyone|the public|public|strangers)\b|\b(plain ?text|unencrypted|unmasked|in the clear)\b|\b(passwords?|card numbers?|credit cards?|api keys?|secrets?|tokens?|credentials|pii|personal data|ssns?|passport)\b.{0,40}\b(visible|exposed|logged|printed|dumped|posted|appears?|show(s)? up|included|in (\w+ ){0,2}(logs?|exports?|emails?|urls?|screenshots?)|public|shared)\b|\b(shows?|showing|displays?|displaying|returns?|returning|lists?|listing|sees?|seeing|view|access|visible|exposes?)\b.{0,20}\b(other|another|someone else's|the wrong) (\w+ )?(users?|customers?|orgs?|organi[sz]ations?|accounts?|clients?|tenants?|people|companies|teams?|workspaces?|patients?|members?)('s|')?|\b(sent|sending|emailed|emailing|mailed|shared|sharing|delivered|shown|showing|going) (\w+ ){0,3}to (the )?wrong\b|\b(see|sees|seeing|view|viewing|access|accessing|shows?|showing|visible)\b.{0,20}\b(other|another) [\w-]+(s'|'s)|\b(fraud(ulent)?|ddos|brute[- ]force|crypto ?min\w*|account takeover|credential stuffing)\b/

/** A hard deadline today/tomorrow, or an explicit "right now". */
export const NEAR_DEADLINE =
  /\b(today|tonight|tomorrow|this (morning|afternoon|evening)|end of (the )?day|eod|cob|close of business|asap|immediately|right (now|away)|within (the|an|the next|one|two|\d+) (hour|hours|minutes?)|in (an|one|two|\d+) (hours?|minutes?)|(at|by|before) (noon|midnight|lunch|\d{1,2}(:\d\d)? ?(am|pm)|\d{1,2}:\d\d))\b|\b(fix|stop|do|ship|revert|act|call|send) (it |this |them )?now\b|\bnow\s*[!.]?$/

/** Urgency explicitly taken back, or a horizon beyond tomorrow. */
export const NOT_URGENT =
  /\b(not (urgent|critical|a priority|pressing|time[- ]sensitive|today|blocking)|no (rush|hurry)|low[- ]priority|whenever|some ?time|someday|eventually|can wait|when (you|we) (get|have) (a chance|time)|nice to have|if (we|there's|there is) time|back ?burner)\b/
export const FAR_TIME =
  /\b(next (week|month|quarter|year|sprint|cycle|release|monday|tuesday|wednesday|thursday|friday)|in (\d+|a few|two|three|several) (days|weeks|months)|this (week|month|quarter|year)|(by|before) (the )?end of (the )?(week|month|quarter|year)|later)\b/

/** Service unavailable for users. */
export const OUTAGE =
  /\b(outage(?!s)|unavailable|unreachable|locked out)\b|\bexpired (ssl|tls|cert|certificate|domain)\b|\b(ssl|tls|cert|certificate|domain) (has )?expired\b|\b(is|are|went|goes) offline\b|\b(is|are|went|goes|still) down\b|\bdown (for|since|across|in(?= [a-z])|everywhere|globally)\b|\bdown\s*([-,;]|$)|\b(returns?|returning|throws?|throwing|gives?|giving) (a |an )?5\d\d\b|\b5\d\d(s| errors?)\b|\b(no ?one|nobody|none of (the|our) \w+)\b.{0,40}\b(can|could|is able|are able)\b|\b(can'?t|cannot|can not|unable to) (log|sign|get) ?in\b/

/** Money or legal harm in progress. */
export const MONEY_LEGAL =
  /\b(charg(ed|ing|es)\b.{0,30}\b(twice|again|double|two times)|double[- ]charg\w*|overcharg\w*|payments? (are |is )?(not|aren't|isn't|failing|failed|bouncing|stuck|lost)|payouts? (are |is )?(frozen|blocked|held|failing|stuck)|wrong (\w+ )?(amounts?|prices?|salary|salaries|totals?|figures|rates?|tax|fees?|charges?)|frozen|suspended|legally|illegal(ly)?|fined|fines|penalt(y|ies)|lawsuit|sued|non-?compliant|losing (money|revenue|customers|data)|data loss|already paid|aren't being paid|not being paid)\b/

/** Breadth: everyone is hit, not one account. */
export const BREADTH = /\b(all|every|everyone|everybody|no ?one|nobody|entire|whole)\b/

/** It is happening now, or started today. */
export const ONGOING =
  /\b(since (this morning|last night|midnight|yesterday|today|the \d|\d|[\w'.]+ (deploy|release|update|migration|rotation|change|schema change))|this morning|last night|(\w+|\d+) (minutes|mins|hours?) ago|right now|currently|ongoing|as we speak|by the (minute|hour))\b/

/** Actions one only asks for during an incident. */
export const EMERGENCY_ACTION =
  /\b(roll ?back|revert|hotfix|stop (it|this|them|the)|halt|kill switch|pause \w+ until|take (it|\w+) offline)\b/

/** Present progressive ("is emailing", "are being charged"): it is happening. */
export const PROGRESSIVE = /\b(is|are) (being )?\w+ing\b/

/** Narrow scope lowers severity: one platform, one condition, some users. */
export const NARROW =
  /\b(when|if) \w+|\bon (android|ios|safari|firefox|edge|windows|mac)\b|\b(some|a few|one|occasionally|sometimes|intermittent(ly)?)\b/

/** Nouns naming a chore; a heading ending in one is a task ("Idea board clean-up: …"). */
export const ACTION_NOUNS = set(`
  audit check clean-up cleanup fix follow-up followup launch migration prep redesign refactor release
  review rewrite rollout setup test triage update upgrade
`)

/** Pure genre words: "Idea for next term: …" is a memo even if an order-like clause follows. */
export const GENRE_NOUNS = set(`
  datapoint datapoints fact facts hunch hypothesis idea ideas insight insights inspiration learning
  learnings lesson lessons musing notes observation observations pattern principle principles rumor
  rumour stat stats takeaway takeaways theme theory thought thoughts
`)

/** Write-ups of something that happened: "Post-incident review: …", "Retro: …". */
export const REVIEW_GENRE = /^(post-incident review|incident review|post-?mortem|retro(spective)?|debrief|readout)\b/

/** Expected behaviour in a description ("should round half up") marks the label as a defect. */
export const EXPECTED_BEHAVIOUR =
  /\b(?<!we |i |you )should (be|have|round|show|say|display|read|work|use|go|stay|keep|match|include|open|load|send|appear)\b|\bsupposed to\b|\bexpected (to|behaviou?r)\b/

/**
 * A specific date: "Never…"/"Don't…" with one is a task, not a standing rule
 * ("Don't let the cert lapse - renews Thursday"). Habitual times ("on Fridays",
 * "on a Monday", "Monday morning rush", "at 3pm") do not count.
 */
export const TIME_BOUND =
  /\b(today|tonight|tomorrow|this (morning|afternoon|evening|week)|next (week|month)|deadline|due|eod|asap)\b|(?<!\b(on|every|during|a|the) )\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?! (morning|afternoon|evening|night)s?\b)/
