# fish completion for plat. Generated from plat's command definitions by
# `plat completion fish` (npm run build keeps completions/ in sync); do not edit.
# Use: plat completion fish > ~/.config/fish/completions/plat.fish

# Whether option $argv[2] of command $argv[1] takes a value (the next word).
function __plat_takes_value
    contains -- $argv[2] --base-url --profile; and return 0
    switch $argv[1]
        case login
            contains -- $argv[2] --scope --add-scope --port --resource --resource-metadata --client-id --client-metadata-url --timeout --for; and return 0
        case token
            contains -- $argv[2] --min-ttl --dpop-proof --dpop-nonce; and return 0
        case exec
            contains -- $argv[2] --env --min-ttl; and return 0
        case call
            contains -- $argv[2] --header -H --field -f --typed-field -F --input --timeout --retry --max-pages --max-items --items --next --jq; and return 0
        case api
            contains -- $argv[2] --method -X --jq -q --header -H --field -f --typed-field -F --input --timeout --retry --max-pages --max-items --items --next; and return 0
        case op
            contains -- $argv[2] --param -p --header -H --field -f --typed-field -F --input --timeout --retry --max-pages --max-items --items --next --jq; and return 0
            contains -- $argv[2] --refresh -i --include --anonymous --paginate --ndjson --slurp -h --help; and return 1
            string match -q -- '--*' $argv[2]; and return 0
        case batch
            contains -- $argv[2] --concurrency --rate --journal --settle-unknown --failed --jq; and return 0
        case mcp
            contains -- $argv[2] --for --concurrency; and return 0
        case proxy
            contains -- $argv[2] --port --socket; and return 0
    end
    return 1
end

# Prints the command (or "(none)" before one) and how many of its arguments precede the cursor.
function __plat_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmd '(none)'
    set -l nargs 0
    set -l skip 0
    set -l first ''
    for t in $tokens
        if test $skip -eq 1
            set skip 0
        else if string match -qr -- '^--.*=' $t
            continue
        else if string match -qr -- '^-.' $t
            __plat_takes_value $cmd $t; and set skip 1
        else if test "$cmd" = '(none)'
            set cmd $t
        else
            test $nargs -eq 0; and set first $t
            set nargs (math $nargs + 1)
        end
    end
    echo $cmd
    echo $nargs
    echo $first
end

function __plat_needs_command
    set -l state (__plat_state)
    test "$state[1]" = '(none)'
end

function __plat_using
    set -l state (__plat_state)
    test "$state[1]" = $argv[1]
end

function __plat_arg
    set -l state (__plat_state)
    test "$state[1]" = $argv[1]; and test "$state[2]" = $argv[2]
end

# Values only this machine knows, from `plat __complete <kind>`; --profile and --base-url are passed on.
function __plat_query
    set -l tokens (commandline -opc)
    set -l context
    for i in (seq 2 (count $tokens))
        switch $tokens[$i]
            case --profile --base-url
                set -l next (math $i + 1)
                test $next -le (count $tokens); and set context $context $tokens[$i] $tokens[$next]
            case '--profile=*' '--base-url=*'
                set context $context $tokens[$i]
        end
    end
    set -l plat $tokens[1]
    command -q $plat; or set plat plat
    $plat __complete $argv $context 2>/dev/null
end

# The operationId when the cursor is among an operation's parameters (plat op <operationId> …).
function __plat_opid
    set -l state (__plat_state)
    contains -- "$state[1]" op; or return 1
    test "$state[2]" -ge 1; or return 1
    echo $state[3]
end

# The operation's --<name> flags, for a word that starts with -.
function __plat_op_flags
    string match -q -- '-*' (commandline -ct); or return
    set -l id (__plat_opid); or return
    __plat_query op-flags $id
end

# The values of the parameter before the cursor (its enum).
function __plat_op_values
    set -l id (__plat_opid); or return
    set -l prev (commandline -opc)[-1]
    string match -q -- '--*' $prev; or return
    __plat_query op-values $id (string replace -r -- '^--' '' $prev)
end

# plat exec -- <command> [args…]: the words after -- are a command line of its own, completed as after sudo.
function __plat_command_line
    set -l tokens (commandline -opc) (commandline -ct)
    set -l at (contains -i -- -- $tokens); or return
    test $at -lt (count $tokens); or return
    __fish_complete_subcommand --commandline $tokens[(math $at + 1)..-1]
end

complete -c plat -f
complete -c plat -n __plat_needs_command -a login -d 'sign in: discover the server, register plat, approve in the browser, store the tokens'
complete -c plat -n '__plat_using login' -l scope -d 'scope to request (plat adds openid profile email where the server offers them); repeat, or separate with spaces or commas' -x -a '(__plat_query scopes)'
complete -c plat -n '__plat_using login' -l add-scope -d 'keep the scopes already granted and add these (step-up)' -x -a '(__plat_query scopes)'
complete -c plat -n '__plat_using login' -l device -d 'sign in with a code on any device (RFC 8628 device flow), where the server offers it'
complete -c plat -n '__plat_using login' -l no-browser -d 'do not open a browser; print the address only'
complete -c plat -n '__plat_using login' -l port -d 'port of the local callback listener on 127.0.0.1 (default: a free one)' -x
complete -c plat -n '__plat_using login' -l resource -d 'resource indicator (RFC 8707) to bind the tokens to' -x
complete -c plat -n '__plat_using login' -l resource-metadata -d 'address of the API\'s protected-resource metadata (RFC 9728), where no well-known address has it' -x
complete -c plat -n '__plat_using login' -l client-id -d 'use a pre-registered client instead of registering one' -x
complete -c plat -n '__plat_using login' -l client-secret-stdin -d 'read the pre-registered client\'s secret from the first line of stdin'
complete -c plat -n '__plat_using login' -l client-metadata-url -d 'use the https URL of your client ID metadata document as the client_id (servers that support it)' -x
complete -c plat -n '__plat_using login' -l timeout -d 'how long to wait for approval in the browser (default: 300)' -x
complete -c plat -n '__plat_using login' -l no-dpop -d 'ask for bearer tokens even where the server offers DPoP-bound ones (RFC 9449)'
complete -c plat -n '__plat_using login' -l for -d 'ask for exactly the scopes these operations need (plat scopes plan); repeat, or separate with spaces or commas' -x -a '(__plat_query operations)'
complete -c plat -n __plat_needs_command -a whoami -d 'show who you are signed in as (OIDC UserInfo)'
complete -c plat -n __plat_needs_command -a status -d 'list profiles (or the one named): platform, user, scopes, token expiry, where tokens are stored; exit 4 if one is not logged in'
complete -c plat -n '__plat_using status' -l check -d 'also ask the server whether each token still works'
complete -c plat -n '__plat_arg status 0' -x -a '(__plat_query profiles)' -d 'show only this profile'
complete -c plat -n __plat_needs_command -a switch -d 'make a profile the current one (kept in the config dir); --profile and PLAT_PROFILE still win'
complete -c plat -n '__plat_arg switch 0' -x -a '(__plat_query profiles)' -d 'the profile to use from now on'
complete -c plat -n __plat_needs_command -a refresh -d 'refresh the access token now and store the rotated refresh token'
complete -c plat -n __plat_needs_command -a token -d 'print the access token (refreshed if needed) and nothing else'
complete -c plat -n '__plat_using token' -l min-ttl -d 'refresh first if the token would expire sooner; exit 4 if the server cannot give one that lasts' -x
complete -c plat -n '__plat_using token' -l dpop-bound -d 'on a DPoP-bound session: print the token anyway, for a program that sends it with proofs (--dpop-proof)'
complete -c plat -n '__plat_using token' -l dpop-proof -d 'on a DPoP-bound session: print a fresh DPoP proof for one request to the platform (--json: with the token and the key\'s thumbprint)' -x
complete -c plat -n '__plat_using token' -l dpop-nonce -d 'the DPoP-Nonce the server gave, for --dpop-proof' -x
complete -c plat -n __plat_needs_command -a exec -d 'run a program with a fresh token in its environment (PLAT_TOKEN, PLAT_BASE_URL)'
complete -c plat -n '__plat_using exec' -l env -d 'the environment variable that carries the token' -x
complete -c plat -n '__plat_using exec' -l proxy -d 'give the program no token: a plat proxy for its lifetime, in PLAT_PROXY_URL and PLAT_BASE_URL'
complete -c plat -n '__plat_using exec' -l min-ttl -d 'refresh first if the token would expire sooner, as plat token does; exit 4 if the server cannot give one that lasts' -x
complete -c plat -n '__plat_using exec' -x -a '(__plat_command_line)'
complete -c plat -n __plat_needs_command -a logout -d 'revoke the tokens at the server and forget them locally'
complete -c plat -n '__plat_using logout' -l no-revoke -d 'only forget the tokens locally'
complete -c plat -n '__plat_using logout' -l all -d 'log out of every profile'
complete -c plat -n '__plat_using logout' -l forget -d 'also delete the profile: its platform, client registration and user'
complete -c plat -n __plat_needs_command -a call -d 'call the API with your token; the response body goes to stdout'
complete -c plat -n '__plat_using call' -s H -l header -d 'add a request header "Name: value" (repeatable)' -x
complete -c plat -n '__plat_using call' -s f -l field -d 'add a string field (repeatable): query on GET/HEAD/DELETE, JSON body otherwise' -x
complete -c plat -n '__plat_using call' -s F -l typed-field -d 'add a typed field: numbers, true/false/null, @file (repeatable)' -x
complete -c plat -n '__plat_using call' -l input -d 'send a file (or - for stdin) as the request body' -r -F
complete -c plat -n '__plat_using call' -s i -l include -d 'print the status line and response headers first'
complete -c plat -n '__plat_using call' -l anonymous -d 'send no token'
complete -c plat -n '__plat_using call' -l timeout -d 'give up after this many seconds (default: 600)' -x
complete -c plat -n '__plat_using call' -l retry -d 'retries on 429/503 (and 502/504/resets for GET, HEAD, OPTIONS, PUT, DELETE); default 2 for those methods, 0 for others' -x
complete -c plat -n '__plat_using call' -l paginate -d 'follow every page and print one JSON array of all the items'
complete -c plat -n '__plat_using call' -l ndjson -d 'with --paginate: one item per line, printed as pages arrive'
complete -c plat -n '__plat_using call' -l slurp -d 'with --paginate: an array of the whole page bodies, not just their items'
complete -c plat -n '__plat_using call' -l max-pages -d 'with --paginate: stop after n pages' -x
complete -c plat -n '__plat_using call' -l max-items -d 'with --paginate: stop after n items' -x
complete -c plat -n '__plat_using call' -l items -d 'with --paginate: where the items are in each page (e.g. data.rows), when detection cannot tell' -x
complete -c plat -n '__plat_using call' -l next -d 'with --paginate: the member with the next page\'s URL or cursor (path=param names the cursor\'s query parameter)' -x
complete -c plat -n '__plat_using call' -l jq -d 'filter the JSON response with jq (with --paginate: one array of every page\'s items, not each page as in gh; with --ndjson: each item)' -x
complete -c plat -n '__plat_arg call 0' -x -a 'GET POST PUT PATCH DELETE HEAD OPTIONS' -d 'HTTP method: GET, POST, PUT, PATCH, DELETE, …'
complete -c plat -n '__plat_arg call 1' -x -a '(__plat_query paths)' -d 'path relative to the base URL (/api/courses), or an absolute URL'
complete -c plat -n __plat_needs_command -a api -d 'gh api\'s shape: call a path (GET, or POST with fields) with your token; the response body goes to stdout'
complete -c plat -n '__plat_using api' -s X -l method -d 'the HTTP method (default: GET, or POST when -f/-F/--input give a body)' -x -a 'GET POST PUT PATCH DELETE HEAD OPTIONS'
complete -c plat -n '__plat_using api' -s q -l jq -d 'filter the JSON response with jq (with --paginate: the merged items, not each page as gh does)' -x
complete -c plat -n '__plat_using api' -l silent -d 'do not print the response body (the exit code still says how it went; -i still prints the head)'
complete -c plat -n '__plat_using api' -s H -l header -d 'add a request header "Name: value" (repeatable)' -x
complete -c plat -n '__plat_using api' -s f -l field -d 'add a string field (repeatable): query on GET/HEAD/DELETE, JSON body otherwise' -x
complete -c plat -n '__plat_using api' -s F -l typed-field -d 'add a typed field: numbers, true/false/null, @file (repeatable)' -x
complete -c plat -n '__plat_using api' -l input -d 'send a file (or - for stdin) as the request body' -r -F
complete -c plat -n '__plat_using api' -s i -l include -d 'print the status line and response headers first'
complete -c plat -n '__plat_using api' -l anonymous -d 'send no token'
complete -c plat -n '__plat_using api' -l timeout -d 'give up after this many seconds (default: 600)' -x
complete -c plat -n '__plat_using api' -l retry -d 'retries on 429/503 (and 502/504/resets for GET, HEAD, OPTIONS, PUT, DELETE); default 2 for those methods, 0 for others' -x
complete -c plat -n '__plat_using api' -l paginate -d 'follow every page and print one JSON array of all the items'
complete -c plat -n '__plat_using api' -l ndjson -d 'with --paginate: one item per line, printed as pages arrive'
complete -c plat -n '__plat_using api' -l slurp -d 'with --paginate: an array of the whole page bodies, not just their items'
complete -c plat -n '__plat_using api' -l max-pages -d 'with --paginate: stop after n pages' -x
complete -c plat -n '__plat_using api' -l max-items -d 'with --paginate: stop after n items' -x
complete -c plat -n '__plat_using api' -l items -d 'with --paginate: where the items are in each page (e.g. data.rows), when detection cannot tell' -x
complete -c plat -n '__plat_using api' -l next -d 'with --paginate: the member with the next page\'s URL or cursor (path=param names the cursor\'s query parameter)' -x
complete -c plat -n '__plat_arg api 0' -x -a '(__plat_query paths)' -d 'path relative to the base URL (/api/courses), or an absolute URL'
complete -c plat -n __plat_needs_command -a op -d 'list the API\'s operations from its /openapi.json, or call one by its operationId with checked parameters'
complete -c plat -n '__plat_using op' -s p -l param -d 'a parameter whose name plat uses itself (repeatable)' -x
complete -c plat -n '__plat_using op' -l refresh -d 'fetch /openapi.json again now (otherwise the cached copy is used for an hour)'
complete -c plat -n '__plat_using op' -s H -l header -d 'add a request header "Name: value" (repeatable)' -x
complete -c plat -n '__plat_using op' -s f -l field -d 'add a string field (repeatable): query on GET/HEAD/DELETE, JSON body otherwise' -x
complete -c plat -n '__plat_using op' -s F -l typed-field -d 'add a typed field: numbers, true/false/null, @file (repeatable)' -x
complete -c plat -n '__plat_using op' -l input -d 'send a file (or - for stdin) as the request body' -r -F
complete -c plat -n '__plat_using op' -s i -l include -d 'print the status line and response headers first'
complete -c plat -n '__plat_using op' -l anonymous -d 'send no token'
complete -c plat -n '__plat_using op' -l timeout -d 'give up after this many seconds (default: 600)' -x
complete -c plat -n '__plat_using op' -l retry -d 'retries on 429/503 (and 502/504/resets for GET, HEAD, OPTIONS, PUT, DELETE); default 2 for those methods, 0 for others' -x
complete -c plat -n '__plat_using op' -l paginate -d 'follow every page and print one JSON array of all the items'
complete -c plat -n '__plat_using op' -l ndjson -d 'with --paginate: one item per line, printed as pages arrive'
complete -c plat -n '__plat_using op' -l slurp -d 'with --paginate: an array of the whole page bodies, not just their items'
complete -c plat -n '__plat_using op' -l max-pages -d 'with --paginate: stop after n pages' -x
complete -c plat -n '__plat_using op' -l max-items -d 'with --paginate: stop after n items' -x
complete -c plat -n '__plat_using op' -l items -d 'with --paginate: where the items are in each page (e.g. data.rows), when detection cannot tell' -x
complete -c plat -n '__plat_using op' -l next -d 'with --paginate: the member with the next page\'s URL or cursor (path=param names the cursor\'s query parameter)' -x
complete -c plat -n '__plat_using op' -l jq -d 'filter the JSON response with jq (with --paginate: one array of every page\'s items, not each page as in gh; with --ndjson: each item)' -x
complete -c plat -n '__plat_arg op 0' -x -a '(__plat_query operations)' -d 'the operation to call; anything else filters the list (method, path, summary, id, scopes)'
complete -c plat -n __plat_needs_command -a scopes -d 'list the scopes the platform offers and which your session holds; plan the least set some operations need'
complete -c plat -n '__plat_using scopes' -x -a '(__plat_query operations)' -d 'operations from plat op'
complete -c plat -n __plat_needs_command -a batch -d 'send many requests from NDJSON lines: parallel over one session, paced, resumable with a journal'
complete -c plat -n '__plat_using batch' -l concurrency -d 'requests in flight at once (default: 4)' -x
complete -c plat -n '__plat_using batch' -l rate -d 'at most this many requests a second, e.g. 20/s' -x
complete -c plat -n '__plat_using batch' -l journal -d 'record each line\'s outcome; a rerun with the same journal skips what is done and sends what failed' -r -F
complete -c plat -n '__plat_using batch' -l idempotency-key -d 'send a stable Idempotency-Key per line (kept in the journal), so a line in flight when a run died can be sent again'
complete -c plat -n '__plat_using batch' -l resend-unknown -d 'send again the lines the journal holds as unknown (you checked: they did not happen)'
complete -c plat -n '__plat_using batch' -l settle-unknown -d 'record the unknown lines as done or failed without sending them (you checked)' -x -a 'done failed'
complete -c plat -n '__plat_using batch' -l failed -d 'write the lines that failed or are unknown to this file, as NDJSON to fix and rerun' -r -F
complete -c plat -n '__plat_using batch' -l ordered -d 'print results in input order (default: as they complete)'
complete -c plat -n '__plat_using batch' -l fail-fast -d 'stop at the first failed line'
complete -c plat -n '__plat_using batch' -l check -d 'check every line and stop; nothing is sent'
complete -c plat -n '__plat_using batch' -l strict -d 'refuse raw lines whose method and path the platform\'s API description does not list'
complete -c plat -n '__plat_using batch' -l jq -d 'filter each result with jq' -x
complete -c plat -n '__plat_arg batch 0' -r -F -d 'NDJSON requests, one a line (- or none: stdin)'
complete -c plat -n __plat_needs_command -a discover -d 'show what the platform publishes: endpoints, grant types, PKCE methods, registration, resource'
complete -c plat -n '__plat_using discover' -l refresh -d 'fetch the metadata again instead of using the cached copy (kept for an hour)'
complete -c plat -n __plat_needs_command -a mcp -d 'serve the API to AI agents: a Model Context Protocol server on stdin/stdout, as you and within your scopes'
complete -c plat -n '__plat_using mcp' -l for -d 'offer exactly these operations as tools (whoami only if named, no call tool); repeat, or separate with spaces or commas' -x -a '(__plat_query operations)'
complete -c plat -n '__plat_using mcp' -l allow-write -d 'also offer operations that change data (POST, PUT, PATCH, DELETE); default: reading only'
complete -c plat -n '__plat_using mcp' -l concurrency -d 'requests at the platform at once, 1 to 64 (default: 8); more calls wait in order' -x
complete -c plat -n __plat_needs_command -a proxy -d 'serve the platform at a local address for any HTTP tool, with your token added (which the tool never sees)'
complete -c plat -n '__plat_using proxy' -l port -d 'the port on 127.0.0.1 (default 0: any free port)' -x
complete -c plat -n '__plat_using proxy' -l socket -d 'listen on a unix socket (made 0600) instead of TCP' -r -F
complete -c plat -n '__plat_using proxy' -l allow-write -d 'also forward methods that change data (POST, PUT, PATCH, DELETE); default: reading only'
complete -c plat -n __plat_needs_command -a completion -d 'print the shell completion script for bash, zsh or fish'
complete -c plat -n '__plat_arg completion 0' -x -a 'bash zsh fish' -d 'the shell: bash, zsh or fish'
complete -c plat -n __plat_needs_command -a help -d 'show help for a command, or a topic of the reference (the same text as man plat)'
complete -c plat -n '__plat_arg help 0' -x -a 'login whoami status switch refresh token exec logout call api op scopes batch discover mcp proxy completion sign-in sessions requests scripting agents security environment files exit-codes troubleshooting' -d 'a command, or one of the help topics below'
complete -c plat -n '__plat_opid >/dev/null' -a '(__plat_op_flags)'
complete -c plat -n '__plat_opid >/dev/null' -a '(__plat_op_values)'
complete -c plat -l version -d 'print the version'
complete -c plat -l base-url -d 'origin of the platform API (env: PLAT_BASE_URL; remembered by the profile at login)' -x -a '(__plat_query base-urls)'
complete -c plat -l profile -d 'which stored session to use (env: PLAT_PROFILE; default: default)' -x -a '(__plat_query profiles)'
complete -c plat -l json -d 'machine-readable output on stdout'
complete -c plat -l verbose -d 'HTTP trace on stderr, secrets redacted (env: PLAT_DEBUG=1)'
complete -c plat -l no-color -d 'never colour output (also NO_COLOR; FORCE_COLOR forces it)'
complete -c plat -l no-prompt -d 'never ask a question, e.g. to step up on a missing scope (env: PLAT_NO_PROMPT=1)'
complete -c plat -s h -l help -d 'show help'
